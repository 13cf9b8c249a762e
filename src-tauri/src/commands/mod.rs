//! Tauri command adapters: parse, call the state or the library, return the
//! result or the standardized error. No tool logic lives here.

pub mod checkpoints;
pub mod conversation;
pub mod llm;
pub mod mcp;
pub mod policy;
pub mod project;
pub mod shell;
pub mod tools;
