//! The one error shape every tool and command answers with.
//!
//! Internally each part fails with an [`Error`]; at the IPC boundary it is
//! serialized as `{code, message, hint, retryable, details}`. The codes are a
//! closed, documented enum: the frontend and the LLM may match on them.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;

/// Stable, snake_case error codes. Adding one is a contract change: document
/// it in `docs/design.md` and pin its JSON in `tests/errors.rs`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema, ts_rs::TS,
)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// A tool was called before a project folder was opened.
    NoProjectOpen,
    /// The input does not fit the tool's schema or its rules.
    InvalidInput,
    /// The path does not exist.
    NotFound,
    /// The target exists and the call may not replace it.
    AlreadyExists,
    /// A file was expected; the path is a folder.
    IsDirectory,
    /// A folder was expected; the path (or one of its parents) is a file.
    NotADirectory,
    /// The file is binary or not valid UTF-8.
    NotText,
    /// The file or input is larger than the tool handles.
    TooLarge,
    /// The path resolves outside the project folder.
    PathOutsideRoot,
    /// The path is inside the root but protected (`.git/`, blocked paths).
    PathProtected,
    /// The call needs the user's approval and has none.
    ApprovalRequired,
    /// The policy or the user refused the call.
    Denied,
    /// The operating system refused access.
    PermissionDenied,
    /// `old_string` was not found.
    NoMatch,
    /// `old_string` matched more than once.
    AmbiguousMatch,
    /// The file changed on disk while the tool was working on it.
    StaleFile,
    /// The search pattern is not a valid regular expression.
    InvalidRegex,
    /// The program is not on the shell allowlist.
    CommandNotAllowed,
    /// An argument breaks the program's argument rules.
    ArgumentNotAllowed,
    /// The operation was cancelled.
    Cancelled,
    /// Any other input/output failure.
    Io,
    /// The LLM provider rejected the credentials.
    LlmAuth,
    /// The LLM provider is rate limiting.
    LlmRateLimited,
    /// The LLM provider could not be reached or failed.
    LlmUnavailable,
    /// The LLM provider answered something we cannot use.
    LlmBadResponse,
    /// The request does not fit the model's context window.
    LlmContextOverflow,
    /// An MCP server could not take the call: it is not running, crashed,
    /// broke the protocol, refused the call or did not answer in time.
    McpServer,
    /// No language server could answer: none is installed for the file's
    /// language, it crashed, or it did not answer in time.
    LanguageServer,
    /// The app could not be updated: updates are off or left to the
    /// package manager, the manifest could not be fetched or read, the
    /// download's signature does not match the app's key, or the install
    /// failed (`details.reason` says which).
    Update,
}

impl ErrorCode {
    /// Every code, in declaration order (used by docs and tests).
    pub const ALL: [ErrorCode; 29] = [
        ErrorCode::NoProjectOpen,
        ErrorCode::InvalidInput,
        ErrorCode::NotFound,
        ErrorCode::AlreadyExists,
        ErrorCode::IsDirectory,
        ErrorCode::NotADirectory,
        ErrorCode::NotText,
        ErrorCode::TooLarge,
        ErrorCode::PathOutsideRoot,
        ErrorCode::PathProtected,
        ErrorCode::ApprovalRequired,
        ErrorCode::Denied,
        ErrorCode::PermissionDenied,
        ErrorCode::NoMatch,
        ErrorCode::AmbiguousMatch,
        ErrorCode::StaleFile,
        ErrorCode::InvalidRegex,
        ErrorCode::CommandNotAllowed,
        ErrorCode::ArgumentNotAllowed,
        ErrorCode::Cancelled,
        ErrorCode::Io,
        ErrorCode::LlmAuth,
        ErrorCode::LlmRateLimited,
        ErrorCode::LlmUnavailable,
        ErrorCode::LlmBadResponse,
        ErrorCode::LlmContextOverflow,
        ErrorCode::McpServer,
        ErrorCode::LanguageServer,
        ErrorCode::Update,
    ];

    /// The snake_case name, as it appears on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::NoProjectOpen => "no_project_open",
            ErrorCode::InvalidInput => "invalid_input",
            ErrorCode::NotFound => "not_found",
            ErrorCode::AlreadyExists => "already_exists",
            ErrorCode::IsDirectory => "is_directory",
            ErrorCode::NotADirectory => "not_a_directory",
            ErrorCode::NotText => "not_text",
            ErrorCode::TooLarge => "too_large",
            ErrorCode::PathOutsideRoot => "path_outside_root",
            ErrorCode::PathProtected => "path_protected",
            ErrorCode::ApprovalRequired => "approval_required",
            ErrorCode::Denied => "denied",
            ErrorCode::PermissionDenied => "permission_denied",
            ErrorCode::NoMatch => "no_match",
            ErrorCode::AmbiguousMatch => "ambiguous_match",
            ErrorCode::StaleFile => "stale_file",
            ErrorCode::InvalidRegex => "invalid_regex",
            ErrorCode::CommandNotAllowed => "command_not_allowed",
            ErrorCode::ArgumentNotAllowed => "argument_not_allowed",
            ErrorCode::Cancelled => "cancelled",
            ErrorCode::Io => "io",
            ErrorCode::LlmAuth => "llm_auth",
            ErrorCode::LlmRateLimited => "llm_rate_limited",
            ErrorCode::LlmUnavailable => "llm_unavailable",
            ErrorCode::LlmBadResponse => "llm_bad_response",
            ErrorCode::LlmContextOverflow => "llm_context_overflow",
            ErrorCode::McpServer => "mcp_server",
            ErrorCode::LanguageServer => "language_server",
            ErrorCode::Update => "update",
        }
    }

    /// Whether trying the same call again may succeed without changing it.
    pub fn default_retryable(self) -> bool {
        matches!(
            self,
            ErrorCode::StaleFile | ErrorCode::LlmRateLimited | ErrorCode::LlmUnavailable
        )
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The standardized error: what happened, to what, and what to do next.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(rename = "WireError")]
pub struct Error {
    /// Stable machine-readable code.
    pub code: ErrorCode,
    /// One sentence for people and models: what happened, to what.
    pub message: String,
    /// What to do next.
    pub hint: String,
    /// Whether the same call may succeed later.
    pub retryable: bool,
    /// Structured facts (the path, the matched lines, the argument...).
    #[ts(type = "Record<string, unknown>")]
    pub details: Map<String, Value>,
}

impl Error {
    /// An error with the code's default hint and retryability.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
            hint: default_hint(code).to_string(),
            retryable: code.default_retryable(),
            details: Map::new(),
        }
    }

    /// Replaces the hint.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = hint.into();
        self
    }

    /// Adds one detail.
    pub fn detail(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.details.insert(key.to_string(), value.into());
        self
    }

    /// Overrides retryability.
    pub fn retryable(mut self, retryable: bool) -> Self {
        self.retryable = retryable;
        self
    }

    /// `invalid_input` with a message.
    pub fn invalid_input(message: impl Into<String>) -> Self {
        Error::new(ErrorCode::InvalidInput, message)
    }

    /// Maps an OS error met while working on `path` (relative, for display).
    pub fn from_io(err: &std::io::Error, path: &str) -> Self {
        use std::io::ErrorKind as K;
        let (code, message) = match err.kind() {
            K::NotFound => (ErrorCode::NotFound, format!("`{path}` does not exist")),
            K::AlreadyExists => (ErrorCode::AlreadyExists, format!("`{path}` already exists")),
            K::IsADirectory => (ErrorCode::IsDirectory, format!("`{path}` is a folder")),
            K::NotADirectory => (
                ErrorCode::NotADirectory,
                format!("a parent of `{path}` is not a folder"),
            ),
            _ if is_escape(err) => (
                ErrorCode::PathOutsideRoot,
                format!("`{path}` resolves outside the project folder"),
            ),
            _ if err.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) => (
                ErrorCode::InvalidInput,
                format!(
                    "`{path}` goes through a symlink loop or a symlink the tool does not follow"
                ),
            ),
            K::PermissionDenied => (
                ErrorCode::PermissionDenied,
                format!("the system refused access to `{path}`"),
            ),
            K::StorageFull => (
                ErrorCode::Io,
                format!("the disk is full while writing `{path}`"),
            ),
            _ => (ErrorCode::Io, format!("`{path}`: {err}")),
        };
        Error::new(code, message).detail("path", path)
    }

    /// The JSON object sent over the wire.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or_else(|_| {
            serde_json::json!({"code": "io", "message": "error could not be serialized",
                "hint": "", "retryable": false, "details": {}})
        })
    }
}

/// cap-std reports every attempt to leave its directory handle (`..` past the
/// root, an absolute symlink, a symlink pointing out) with this message.
fn is_escape(err: &std::io::Error) -> bool {
    err.raw_os_error() == Some(rustix::io::Errno::XDEV.raw_os_error())
        || err
            .to_string()
            .contains("a path led outside of the filesystem")
}

fn default_hint(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::NoProjectOpen => "Open a project folder first.",
        ErrorCode::InvalidInput => "Check the tool's input schema and try again with valid input.",
        ErrorCode::NotFound => "Check the path with list_directory or glob.",
        ErrorCode::AlreadyExists => "Choose another path or remove the existing one first.",
        ErrorCode::IsDirectory => "Give the path of a file, or use list_directory for folders.",
        ErrorCode::NotADirectory => "Give the path of a folder.",
        ErrorCode::NotText => "Only UTF-8 text files can be read or edited.",
        ErrorCode::TooLarge => {
            "Read a smaller range, or use search_files to find the part you need."
        }
        ErrorCode::PathOutsideRoot => "Use a path inside the project, relative to its root.",
        ErrorCode::PathProtected => "This path may not be changed by the file tools.",
        ErrorCode::ApprovalRequired => "Ask the user to approve this call.",
        ErrorCode::Denied => "Do not retry the same call; choose another approach or ask the user.",
        ErrorCode::PermissionDenied => "Check the file's permissions.",
        ErrorCode::NoMatch => {
            "Read the file again and copy old_string exactly, including whitespace."
        }
        ErrorCode::AmbiguousMatch => {
            "Add surrounding lines to old_string so it matches once, or set replace_all."
        }
        ErrorCode::StaleFile => {
            "The file changed while the tool worked on it; read it again and retry."
        }
        ErrorCode::InvalidRegex => "Fix the pattern, or set regex to false to search literally.",
        ErrorCode::CommandNotAllowed => "Use one of the allowlisted programs.",
        ErrorCode::ArgumentNotAllowed => "Remove or change the named argument.",
        ErrorCode::Cancelled => "The user stopped this; do not retry unless asked.",
        ErrorCode::Io => "Try again; if it persists, check the disk and the file.",
        ErrorCode::LlmAuth => "Check the API key in Settings.",
        ErrorCode::LlmRateLimited => "Wait a moment and retry.",
        ErrorCode::LlmUnavailable => {
            "Check the provider's base URL and your connection, then retry."
        }
        ErrorCode::LlmBadResponse => "Retry; if it persists, try another model or provider.",
        ErrorCode::LlmContextOverflow => {
            "Compact the conversation (older turns become a summary) or start a new one; a larger context window on the server also helps."
        }
        ErrorCode::McpServer => {
            "Check the server in Settings (its state and stderr), restart it, or do without its tools."
        }
        ErrorCode::LanguageServer => {
            "Build or run the project's checks with exec_shell instead; the language server may answer a later call."
        }
        ErrorCode::Update => "Check the update settings; the installed app was left as it was.",
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for Error {}

/// Result of every tool.
pub type Result<T, E = Error> = std::result::Result<T, E>;
