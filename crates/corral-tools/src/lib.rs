//! Corral's scoped tool layer.
//!
//! Everything the agent may do to the machine goes through this crate: a
//! [`ProjectRoot`] handle that keeps every path beneath the project folder,
//! the file tools, search, the allowlisted shell, the approval [`policy`],
//! and one standardized [`Error`]. It knows nothing of Tauri; the app and
//! `corral-cli` are thin adapters over [`dispatch::call`].
//!
//! ```
//! use corral_tools::{dispatch, policy::{Approval, Mode}, ProjectRoot};
//! use serde_json::json;
//!
//! let dir = tempfile::tempdir()?;
//! let root = ProjectRoot::open(dir.path())?;
//! let ctx = dispatch::CallContext::new(Mode::FullAuto, Approval::None);
//! dispatch::call(&root, "write_file", json!({"path": "src/hi.txt", "content": "hi\n"}), &ctx)?;
//! let out = dispatch::call(&root, "read_file", json!({"path": "src/hi.txt"}), &ctx)?;
//! assert_eq!(out["content"], "hi\n");
//!
//! // Nothing outside the folder:
//! let err = dispatch::call(&root, "read_file", json!({"path": "../x"}), &ctx).unwrap_err();
//! assert_eq!(err.code.as_str(), "path_outside_root");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod dispatch;
pub mod display;
pub mod lsp;
pub mod policy;
pub mod spec;
pub mod tool;
pub mod tools;
pub mod web;

/// Checkpoints and restore, from their own crate.
pub use corral_checkpoint as checkpoint;
/// The file operations and the project-root handle, from their own crate.
pub use corral_fs as fs;
pub use corral_fs::root;
/// The standardized error, from the leaf crate every part of Corral shares.
pub use corral_protocol::error;
pub use corral_protocol::{Error, ErrorCode, Result};
/// The sandbox `exec_shell` runs in, from its own crate.
pub use corral_sandbox as shell;
/// A hard link to a secret-like file is judged as that file.
pub use corral_sandbox::secret_links;
/// search_files' and glob's engine and the search index, from their own crate.
pub use corral_search as search;
pub use root::{ProjectRoot, RelPath};
