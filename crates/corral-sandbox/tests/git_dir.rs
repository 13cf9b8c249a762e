#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods
)]
//! What an approved git may write in its own folder: only what ordinary
//! work needs. A program git runs (`diff.external`) sees what git sees,
//! so one walks git's folder from inside an approved `git diff
//! --ext-diff` and tries to write everything; what it could write is
//! compared with the table `docs/security.md` documents.

mod shell_common;

use corral_sandbox::namespaces_available;
use shell_common::*;
use std::path::Path;

fn namespaces() -> bool {
    let there = namespaces_available() && has_node();
    if !there {
        eprintln!("note: bubblewrap or node is missing; skipping");
    }
    there
}

/// Walks `.git` and tries to write every folder (a new file) and file
/// (opened for writing, not truncated), and the names an attacker would
/// plant; prints `R path` where the mount is read-only (`EROFS`; for a
/// planted name, any failure), else `W path`.
const PROBE: &str = r#"
const fs = require('fs'), p = require('path');
const g = p.join(__dirname, '.git');
const out = [];
// Only the mount is judged: a file's own mode (objects are 0444) is not.
// A planted name counts only if it was written.
const probe = (rel, write, planted) => {
  try { write(); out.push('W ' + rel); }
  catch (e) { out.push((planted || e.code === 'EROFS' ? 'R ' : 'W ') + rel); }
};
const walk = (dir) => {
  for (const name of fs.readdirSync(dir)) {
    if (name.startsWith('probe-')) continue;
    const full = p.join(dir, name), rel = p.relative(g, full), st = fs.lstatSync(full);
    if (st.isDirectory()) {
      const made = p.join(full, 'probe-new');
      probe(rel + '/', () => { fs.writeFileSync(made, ''); fs.unlinkSync(made); });
      walk(full);
    } else if (st.isFile()) {
      probe(rel, () => fs.closeSync(fs.openSync(full, 'r+')));
    }
  }
};
walk(g);
for (const rel of ['probe-top', 'hooks/pre-commit', 'modules/x/config', 'worktrees/x/commondir',
                   'info/attributes']) {
  probe('new ' + rel, () => {
    fs.mkdirSync(p.dirname(p.join(g, rel)), { recursive: true });
    fs.writeFileSync(p.join(g, rel), '[core]\n\tfsmonitor = touch /tmp/pwned\n');
  }, true);
}
console.log('PROBE\n' + out.join('\n') + '\nEND');
"#;

/// A repository with a commit and a change, its `hooks/` removed (as
/// some tools make repositories), and a `diff.external` that probes.
fn fixture() -> (tempfile::TempDir, corral_fs::ProjectRoot) {
    let (dir, root) = project();
    let p = dir.path();
    host_git(p, &["init", "-q"]);
    std::fs::write(p.join("a.txt"), "one\n").unwrap();
    host_git(p, &["add", "a.txt"]);
    host_git(p, &["commit", "-qm", "one"]);
    std::fs::write(p.join("a.txt"), "two\n").unwrap();
    std::fs::remove_dir_all(p.join(".git/hooks")).unwrap();
    std::fs::write(p.join("probe.js"), PROBE).unwrap();
    host_git(p, &["config", "diff.external", "node probe.js"]);
    (dir, root)
}

/// The documented table's rows: the names (backquoted, first cell) of
/// the rows whose second cell starts with `writable`, and of those that
/// start with `read-only`.
fn documented() -> (Vec<String>, Vec<String>) {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/security.md"),
    )
    .unwrap();
    let section = doc
        .split("#### What git may write in its own folders")
        .nth(1)
        .expect("the section is documented");
    let (mut writable, mut read_only) = (Vec::new(), Vec::new());
    for line in section
        .lines()
        .take_while(|l| !l.starts_with("The argument rules"))
    {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 4 {
            continue;
        }
        let names: Vec<String> = cells[1]
            .split('`')
            .skip(1)
            .step_by(2)
            .map(|n| n.trim_end_matches('/').to_string())
            .collect();
        if cells[2].starts_with("writable") {
            writable.extend(names);
        } else if cells[2].starts_with("read-only") {
            read_only.extend(names);
        }
    }
    (writable, read_only)
}

/// Whether a top-level name matches a documented pattern (`*.lock`,
/// `BISECT_*`, a plain name).
fn matches(pattern: &str, name: &str) -> bool {
    match (pattern.strip_prefix('*'), pattern.strip_suffix('*')) {
        (Some(suffix), _) => name.ends_with(suffix),
        (_, Some(prefix)) => name.starts_with(prefix),
        _ => pattern == name,
    }
}

#[test]
fn an_approved_git_writes_only_what_the_documented_table_names() {
    if !namespaces() {
        return;
    }
    let (dir, root) = fixture();
    let out = run(&root, "git", &["diff", "--ext-diff"]);
    assert!(out.sandboxed, "{:?}", out.sandbox_note);
    let text = out.stdout.clone();
    let lines: Vec<&str> = text
        .split("PROBE\n")
        .nth(1)
        .unwrap_or_else(|| panic!("the probe did not run: {out:?}"))
        .lines()
        .take_while(|l| *l != "END")
        .collect();
    let (writable, read_only) = documented();
    assert!(writable.iter().any(|n| n == "objects"), "{writable:?}");
    assert!(read_only.iter().any(|n| n == "config"), "{read_only:?}");
    let mut checked = 0;
    for line in &lines {
        let (seen, rel) = line.split_at(2);
        let can_write = seen == "W ";
        if let Some(planted) = rel.strip_prefix("new ") {
            // A new name at the top is writable; under a held or
            // read-only folder it is not.
            let want = !planted.contains('/');
            assert_eq!(can_write, want, "{line}");
            checked += 1;
            continue;
        }
        let top = rel.split('/').next().unwrap();
        let on_writable = writable.iter().any(|w| matches(w, top));
        let on_read_only = read_only.iter().any(|r| matches(r, top));
        assert_eq!(
            can_write,
            on_writable,
            "{line}: the table says {}",
            if on_writable { "writable" } else { "read-only" }
        );
        if !on_writable {
            assert!(
                on_read_only || rel.contains('/') || !can_write,
                "{line}: not in the table"
            );
        }
        checked += 1;
    }
    assert!(checked > 20, "{lines:?}");
    for must in ["R config", "W index", "W HEAD", "W objects/", "R info/"] {
        assert!(lines.contains(&must), "{must}: {lines:?}");
    }
    // Nothing planted survived, and the held folders are gone again.
    let git = dir.path().join(".git");
    assert!(!git.join("hooks").exists(), "the held hooks/ is taken away");
    assert!(!git.join("modules").exists());
    assert!(!git.join("worktrees").exists());
    let config = std::fs::read_to_string(git.join("config")).unwrap();
    assert!(!config.contains("fsmonitor"), "{config}");
}

#[test]
fn git_options_cannot_aim_a_write_at_git_s_folder() {
    if !namespaces() {
        return;
    }
    let (dir, root) = fixture();
    let p = dir.path();
    std::os::unix::fs::symlink(".git/config", p.join("CHANGELOG.md")).unwrap();
    std::os::unix::fs::symlink(".git", p.join("dist")).unwrap();
    for args in [
        &[
            "--work-tree=.git",
            "checkout",
            "HEAD",
            "--",
            "hooks/pre-commit",
        ][..],
        &["log", "-1", "--format=%B", "--output=.git/config"],
        &["log", "-1", "--format=%B", "--output=CHANGELOG.md"],
        &["--work-tree=dist", "checkout", "HEAD", "--", "a.txt"],
    ] {
        let err = corral_sandbox::exec_shell(
            &root,
            &input("git", args),
            &corral_sandbox::ShellRun::default(),
        )
        .unwrap_err();
        assert_eq!(
            err.code,
            corral_fs::ErrorCode::ArgumentNotAllowed,
            "{args:?}"
        );
    }
    assert!(!p.join(".git/hooks").exists());
    let config = std::fs::read_to_string(p.join(".git/config")).unwrap();
    assert!(!config.contains("fsmonitor"), "{config}");
}

/// [`fixture`] with a token kept in its remote's URL.
fn with_a_token_in_a_remote() -> (tempfile::TempDir, corral_fs::ProjectRoot) {
    let (dir, root) = fixture();
    let url = "https://x-access-token:ghp_TOKEN1234@example.com/o/r.git";
    host_git(dir.path(), &["remote", "add", "origin", url]);
    (dir, root)
}

/// A token kept in a remote's URL never reaches the model: `git remote
/// -v` runs without asking, and its output has the userinfo masked.
#[test]
fn a_token_in_a_remote_url_is_masked_in_git_s_output() {
    if !namespaces() {
        return;
    }
    let (_dir, root) = with_a_token_in_a_remote();
    let out = run(&root, "git", &["remote", "-v"]);
    assert!(out.sandboxed, "{:?}", out.sandbox_note);
    assert!(!out.stdout.contains("ghp_TOKEN1234"), "{out:?}");
    assert!(
        out.stdout.contains("https://***@example.com/o/r.git"),
        "{out:?}"
    );
}

/// The same when git runs in the background: its output, read a piece
/// at a time, never carries the token either.
#[test]
fn a_token_in_a_background_git_s_output_is_masked_too() {
    if !namespaces() {
        return;
    }
    let (_dir, root) = with_a_token_in_a_remote();
    let bg = corral_sandbox::background::Background::default();
    let started = bg
        .start(
            &root,
            &input("git", &["remote", "-v"]),
            &corral_sandbox::ShellRun::default(),
        )
        .unwrap();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let mut out = bg.output(&started.run_id, 0).unwrap();
    while out.running && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(20));
        out = bg.output(&started.run_id, 0).unwrap();
    }
    assert!(!out.running, "{out:?}");
    assert!(!out.output.contains("ghp_TOKEN1234"), "{out:?}");
    assert!(
        out.output.contains("https://***@example.com/o/r.git"),
        "{out:?}"
    );
}
