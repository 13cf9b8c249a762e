//! A command's memory limit holds: where a memory cgroup can be made, the
//! child joins it before it becomes bwrap (on cgroup v1 through `tasks`,
//! which moves the one thread the forked child has, without the
//! system-wide lock whose grace period cost every command 10 to 40 ms),
//! and a program that takes more than its limit is killed and the result
//! says so. A real node in the real sandbox.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods
)]

mod shell_common;

use corral_sandbox::{self as shell, exec_shell, Limit, Limits, ShellRun};
use shell_common::*;
use std::path::{Path, PathBuf};

/// Where this process could make a memory cgroup, as the sandbox does:
/// beneath its own in v1's `memory` hierarchy, or its own in v2.
fn memory_cgroup_parent() -> Option<PathBuf> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let unified = Path::new("/sys/fs/cgroup/cgroup.controllers").exists();
    let path = own.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let wanted = if unified {
            controllers.is_empty()
        } else {
            controllers.split(',').any(|c| c == "memory")
        };
        wanted.then(|| path.trim_start_matches('/').to_string())
    })?;
    let base = if unified {
        PathBuf::from("/sys/fs/cgroup")
    } else {
        PathBuf::from("/sys/fs/cgroup/memory")
    };
    let parent = base.join(path);
    let probe = parent.join(format!("corral-test-{}", std::process::id()));
    std::fs::create_dir(&probe).ok()?;
    let limited = probe.join("memory.max").exists() || probe.join("memory.limit_in_bytes").exists();
    let _ = std::fs::remove_dir(&probe);
    limited.then_some(parent)
}

#[test]
fn a_command_past_its_memory_limit_is_stopped_and_says_so() {
    if !shell::namespaces_available() || !has_node() {
        return;
    }
    let (_dir, root) = project();
    let run = ShellRun {
        limits: Limits {
            memory_bytes: 128 << 20,
            ..Limits::default()
        },
        ..ShellRun::default()
    };
    // 512 MiB, touched, kept.
    let script = "const b = []; for (let i = 0; i < 64; i++) b.push(Buffer.alloc(8 << 20, 1)); console.log('kept ' + b.length)";
    let out = exec_shell(&root, &input("node", &["-e", script]), &run).unwrap();
    assert_ne!(out.stdout, "kept 64\n", "{out:?}");
    assert_ne!(out.exit_code, Some(0), "{out:?}");
    if memory_cgroup_parent().is_some() {
        // The cgroup was joined: it counted the kill.
        assert_eq!(out.limit_hit, Some(Limit::Memory), "{out:?}");
        let note = out.sandbox_note.unwrap_or_default();
        assert!(note.contains("memory limit (128 MiB)"), "{note}");
    }
}
