#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods
)]
//! One hook run end to end, as a tool call pays it: a `PreToolUse` hook
//! whose command is `exit 0`, in the sandbox, from the event's JSON on
//! its stdin to its exit seen and its output read; then again with the
//! bench holding 200 MiB of touched memory, as the app holds its heap (a
//! fork of the caller would copy its page tables).
//!
//! Run: `cargo bench -p corral-hooks --bench hook`.

use corral_fs::ProjectRoot;
use corral_hooks::{run_event, Event, EventInput, HookSet, Source, Verdict};
use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;
use std::time::Duration;

fn bench(c: &mut Criterion) {
    assert!(
        corral_sandbox::namespaces_available(),
        "bubblewrap cannot make namespaces here: hooks would not run"
    );
    let dir = tempfile::tempdir().unwrap();
    let root = ProjectRoot::open(dir.path()).unwrap();
    let mut set = HookSet::default();
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "exec_shell", "hooks": [
        {"type": "command", "command": "exit 0", "timeout": 30}]}]}});
    set.add_text(&settings.to_string(), Source::User, "bench");
    assert!(set.problems.is_empty(), "{:?}", set.problems);
    let call = EventInput {
        session_id: "s1".into(),
        tool_name: Some("exec_shell".into()),
        tool_input: Some(json!({"command": "ls", "args": []})),
        ..EventInput::default()
    };
    let run = || {
        let out = run_event(&root, &set, Event::PreToolUse, &call);
        assert_eq!(out.runs.len(), 1, "{out:?}");
        assert_ne!(out.verdict, Verdict::Deny, "{out:?}");
    };
    let mut g = c.benchmark_group("hook");
    g.sample_size(40).measurement_time(Duration::from_secs(8));
    g.bench_function("pre_tool_use_exit_0", |b| b.iter(run));
    let held = vec![1u8; 200 << 20];
    g.bench_function("pre_tool_use_exit_0_200_mib_held", |b| b.iter(run));
    assert_eq!(
        held.iter()
            .step_by(4096)
            .map(|&x| x as usize)
            .sum::<usize>(),
        200 << 8
    );
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
