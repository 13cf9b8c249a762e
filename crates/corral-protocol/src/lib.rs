//! The contract every part of Corral speaks: one standardized [`Error`] with
//! a closed set of [`ErrorCode`]s, serialized at every boundary (IPC, the
//! CLI's stdout, tool results sent to the model) as
//! `{code, message, hint, retryable, details}`.
//!
//! This crate is a leaf: it depends on serde and nothing of Corral's, so the
//! tool layer, the LLM clients, the CLI and the app share the error without
//! depending on each other.

pub mod error;

pub use error::{Error, ErrorCode, Result};
