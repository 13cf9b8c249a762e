//! The sandbox's limits as the library sets them, for Settings to show:
//! read from the sandbox crate at each call, never written again here or
//! in the window.

use corral_tools::shell::{budget, caches_limit_bytes, Limits};
use serde::Serialize;

/// What each command may use, and what all commands of the app share.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct SandboxLimits {
    /// Processes (and threads) one command may have at once.
    #[ts(type = "number")]
    pub processes: u64,
    /// Memory of one command, in bytes.
    #[ts(type = "number")]
    pub memory_bytes: u64,
    /// The largest file one command may write, in bytes.
    #[ts(type = "number")]
    pub file_size_bytes: u64,
    /// Files one command may have open at once.
    #[ts(type = "number")]
    pub open_files: u64,
    /// What a command's TMPDIR and its `/tmp` may hold, each, in bytes.
    #[ts(type = "number")]
    pub tmp_bytes: u64,
    /// Processes all commands of the app may have at once.
    #[ts(type = "number")]
    pub budget_processes: u64,
    /// Memory all commands of the app share, in bytes; `null` where the
    /// machine's memory could not be read (no budget below it).
    #[ts(type = "number | null")]
    pub budget_memory_bytes: Option<u64>,
    /// What Corral's package caches, shared by every project, may hold,
    /// in bytes.
    #[ts(type = "number")]
    pub caches_bytes: u64,
}

impl SandboxLimits {
    /// The library's: its default limits and this process's budget.
    pub fn current() -> SandboxLimits {
        let limits = Limits::default();
        let (budget_processes, budget_memory) = budget();
        SandboxLimits {
            processes: limits.processes,
            memory_bytes: limits.memory_bytes,
            file_size_bytes: limits.file_size_bytes,
            open_files: limits.open_files,
            tmp_bytes: limits.tmp_bytes,
            budget_processes,
            budget_memory_bytes: (budget_memory != u64::MAX).then_some(budget_memory),
            caches_bytes: caches_limit_bytes(),
        }
    }
}

/// The sandbox's limits for one command and for all at once (Settings).
#[tauri::command(rename_all = "snake_case")]
pub fn sandbox_limits() -> SandboxLimits {
    SandboxLimits::current()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limits_are_the_librarys_defaults_and_budget() {
        let shown = sandbox_limits();
        let defaults = Limits::default();
        assert_eq!(shown.processes, defaults.processes);
        assert_eq!(shown.memory_bytes, defaults.memory_bytes);
        assert_eq!(shown.file_size_bytes, defaults.file_size_bytes);
        assert_eq!(shown.open_files, defaults.open_files);
        assert_eq!(shown.tmp_bytes, defaults.tmp_bytes);
        assert_eq!(shown.caches_bytes, caches_limit_bytes());
        let (processes, memory) = budget();
        assert_eq!(shown.budget_processes, processes);
        match shown.budget_memory_bytes {
            Some(bytes) => assert_eq!(bytes, memory),
            None => assert_eq!(memory, u64::MAX),
        }
    }

    #[test]
    fn the_wire_form_carries_every_number() {
        let json = serde_json::to_value(sandbox_limits()).unwrap();
        let defaults = Limits::default();
        assert_eq!(json["processes"], defaults.processes);
        assert_eq!(json["memory_bytes"], defaults.memory_bytes);
        assert_eq!(json["file_size_bytes"], defaults.file_size_bytes);
        assert_eq!(json["open_files"], defaults.open_files);
        assert_eq!(json["tmp_bytes"], defaults.tmp_bytes);
        assert_eq!(json["budget_processes"], budget().0);
        assert!(json["budget_memory_bytes"].is_u64() || json["budget_memory_bytes"].is_null());
    }
}
