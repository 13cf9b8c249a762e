//! `search_files` and `glob`. (Being built: see issue 3.)

use crate::error::{Error, ErrorCode, Result};
use crate::root::ProjectRoot;
use serde::{Deserialize, Serialize};

/// Input of `search_files`.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchFilesInput {
    /// Regular expression (Rust regex syntax), or a literal string when regex is false.
    pub query: String,
    /// Treat query as a regular expression (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regex: Option<bool>,
    /// Match case-insensitively (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_insensitive: Option<bool>,
    /// Only search files whose path matches this glob, e.g. `*.rs` or `src/**/*.ts`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub glob: Option<String>,
    /// Folder (or file) to search under, relative to the root (default `.`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Most matches to return (default 100, max 1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_results: Option<usize>,
}

/// Input of `glob`.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobInput {
    /// Glob pattern, e.g. `**/*.rs` or `src/*.{ts,tsx}`.
    pub pattern: String,
    /// Folder to search under, relative to the root (default `.`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// Searches file contents.
pub fn search_files(_root: &ProjectRoot, _input: &SearchFilesInput) -> Result<serde_json::Value> {
    Err(Error::new(ErrorCode::Io, "search_files is not built yet"))
}

/// Finds files by pattern.
pub fn glob(_root: &ProjectRoot, _input: &GlobInput) -> Result<serde_json::Value> {
    Err(Error::new(ErrorCode::Io, "glob is not built yet"))
}
