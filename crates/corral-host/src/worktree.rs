//! A task's place: a git worktree of the project on a branch of its own
//! (`corral/<slug>`), in Corral's data folder, never inside the project.
//! The task's session is opened on it, so its fence, checkpoints and
//! search see the worktree as the project; the project's own folder is
//! untouched until the user merges the branch.
//!
//! git runs here outside the sandbox, as the user's own git would, on the
//! user's repository, but with nothing of the repository's that runs by
//! itself: its hooks (`core.hooksPath=/dev/null`, so no `post-checkout`)
//! and its file monitor (`core.fsmonitor=false`).

use corral_tools::{Error, ErrorCode};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A worktree made for a task.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Worktree {
    /// Its folder.
    pub path: PathBuf,
    /// Its branch, `corral/<slug>`.
    pub branch: String,
}

/// The longest slug, in characters.
const SLUG_CHARS: usize = 40;

/// `name` as a branch's last part: lower-case letters, digits and single
/// dashes, at most [`SLUG_CHARS`]; `task` when nothing is left.
pub fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
        if out.len() >= SLUG_CHARS {
            break;
        }
    }
    let out = out.trim_end_matches('-').to_string();
    if out.is_empty() {
        "task".to_string()
    } else {
        out
    }
}

/// Runs git in `dir` with nothing of the repository's that runs by itself.
fn git(dir: &Path) -> Command {
    let mut command = Command::new("git");
    command
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "core.fsmonitor=false",
        ])
        .env("GIT_TERMINAL_PROMPT", "0");
    command
}

fn run(mut command: Command, what: &str) -> Result<String, Error> {
    let out = command
        .output()
        .map_err(|e| Error::new(ErrorCode::Io, format!("could not run git to {what}: {e}")))?;
    if !out.status.success() {
        return Err(Error::new(
            ErrorCode::Io,
            format!(
                "git could not {what}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Where `project`'s worktrees go under `data`: its folder's name and a
/// short digest of its whole path, so two projects of one name differ.
fn home_of(project: &Path, data: &Path) -> PathBuf {
    // FNV-1a: stable across builds, unlike the standard hasher.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in project.as_os_str().as_encoded_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    let name = project
        .file_name()
        .map_or_else(|| "project".to_string(), |n| slug(&n.to_string_lossy()));
    data.join("worktrees")
        .join(format!("{name}-{:08x}", hash as u32))
}

/// Makes a worktree of `project` at its current commit on a new branch
/// `corral/<slug of name>` (a number added when that branch or folder is
/// taken), under `data`. `invalid_input` when the project is not a git
/// repository with a commit: such a project runs one task in place.
pub fn make(project: &Path, data: &Path, name: &str) -> Result<Worktree, Error> {
    let not_a_repository = |e: Error| {
        Error::invalid_input(format!(
            "`{}` is not a git repository with a commit, so a task cannot have a worktree: {}",
            project.display(),
            e.message
        ))
        .hint("Run the task in the project's folder itself (without --worktree), or commit first.")
    };
    let mut head = git(project);
    head.args(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]);
    run(head, "find the project's current commit").map_err(not_a_repository)?;
    let home = home_of(project, data);
    // The app's data folder, never the project's.
    #[allow(clippy::disallowed_methods)]
    let made = std::fs::create_dir_all(&home);
    made.map_err(|e| {
        Error::new(
            ErrorCode::Io,
            format!("could not make {}: {e}", home.display()),
        )
    })?;
    let base = slug(name);
    for n in 1..100 {
        let slug = if n == 1 {
            base.clone()
        } else {
            format!("{base}-{n}")
        };
        let branch = format!("corral/{slug}");
        let path = home.join(&slug);
        let mut taken = git(project);
        taken.args([
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("refs/heads/{branch}"),
        ]);
        if path.exists() || run(taken, "look for the branch").is_ok() {
            continue;
        }
        let mut add = git(project);
        add.args(["worktree", "add", "--quiet", "-b", &branch])
            .arg(&path)
            .arg("HEAD");
        run(add, "make the task's worktree")?;
        return Ok(Worktree { path, branch });
    }
    Err(Error::invalid_input(format!(
        "99 worktrees named `{base}` already exist for this project"
    ))
    .hint("Name the task otherwise, or remove the worktrees it no longer needs."))
}

/// A task's worktree as `git worktree list` has it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Task {
    pub path: PathBuf,
    pub branch: String,
    /// It holds changes not committed on its branch yet.
    pub changed: bool,
}

/// The tasks' worktrees of `project`: those on a `corral/` branch.
pub fn list(project: &Path) -> Result<Vec<Task>, Error> {
    let mut listed = git(project);
    listed.args(["worktree", "list", "--porcelain"]);
    let text = run(listed, "list the worktrees")?;
    let mut tasks = Vec::new();
    for block in text.split("\n\n") {
        let path = block.lines().find_map(|l| l.strip_prefix("worktree "));
        let branch = block
            .lines()
            .find_map(|l| l.strip_prefix("branch refs/heads/"))
            .filter(|b| b.starts_with("corral/"));
        if let (Some(path), Some(branch)) = (path, branch) {
            let path = PathBuf::from(path);
            let mut status = git(&path);
            status.args(["status", "--porcelain"]);
            let changed = !run(status, "read the task's changes")?.is_empty();
            tasks.push(Task {
                path,
                branch: branch.to_string(),
                changed,
            });
        }
    }
    Ok(tasks)
}

/// The task of `project` named `name` (its branch, with or without
/// `corral/`); `not_found` naming the tasks there are.
fn find(project: &Path, name: &str) -> Result<Task, Error> {
    let branch = if name.starts_with("corral/") {
        name.to_string()
    } else {
        format!("corral/{name}")
    };
    let tasks = list(project)?;
    let names: Vec<&str> = tasks.iter().map(|t| t.branch.as_str()).collect();
    let missing =
        Error::new(ErrorCode::NotFound, format!("there is no task `{branch}`")).hint(format!(
            "The project's tasks: {}.",
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        ));
    tasks
        .into_iter()
        .find(|t| t.branch == branch)
        .ok_or(missing)
}

/// git in `dir` with an identity to commit with: the user's, else
/// Corral's (a machine with none configured).
fn committing(dir: &Path) -> Command {
    let mut probe = git(dir);
    probe.args(["config", "user.email"]);
    let mut command = git(dir);
    if run(probe, "read the user's identity").is_err() {
        command.args([
            "-c",
            "user.name=Corral",
            "-c",
            "user.email=corral@localhost",
        ]);
    }
    command
}

/// What a merge did: the task's branch and the commit it landed as.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Merged {
    pub branch: String,
    pub commit: String,
}

/// Lands the task `name` in the project: what its worktree holds
/// uncommitted is committed on its branch first, then the branch is
/// merged into the project's current branch (a merge commit). A conflict
/// leaves the project as it was (`git merge --abort`) and fails naming
/// the files; the task stays for the user to settle.
pub fn merge(project: &Path, name: &str) -> Result<Merged, Error> {
    let task = find(project, name)?;
    if task.changed {
        let mut add = git(&task.path);
        add.args(["add", "--all"]);
        run(add, "stage the task's changes")?;
        let mut commit = committing(&task.path);
        commit
            .args(["commit", "--quiet", "--no-verify", "-m"])
            .arg(format!("{}: the task's changes", task.branch));
        run(commit, "commit the task's changes")?;
    }
    let mut merge = committing(project);
    merge.args(["merge", "--no-ff", "--no-edit", "--quiet", &task.branch]);
    if let Err(e) = run(merge, "merge the task") {
        let mut conflicted = git(project);
        conflicted.args(["diff", "--name-only", "--diff-filter=U"]);
        let files = run(conflicted, "list the conflicts").unwrap_or_default();
        let mut abort = git(project);
        abort.args(["merge", "--abort"]);
        let _ = run(abort, "undo the merge");
        let files: Vec<&str> = files.lines().collect();
        return Err(if files.is_empty() {
            e
        } else {
            Error::new(
                ErrorCode::Io,
                format!(
                    "`{}` conflicts with the project in {}: nothing was merged",
                    task.branch,
                    files.join(", ")
                ),
            )
            .hint("Settle the conflict in the task's worktree (or the project), then merge again.")
            .detail("files", files)
        });
    }
    let mut head = git(project);
    head.args(["rev-parse", "HEAD"]);
    Ok(Merged {
        branch: task.branch,
        commit: run(head, "read the merge commit")?,
    })
}

/// Removes the task `name`: its worktree and its branch. One holding
/// changes not committed, or a branch not merged, is kept unless `force`.
pub fn discard(project: &Path, name: &str, force: bool) -> Result<Task, Error> {
    let task = find(project, name)?;
    if task.changed && !force {
        return Err(Error::invalid_input(format!(
            "`{}` holds changes not committed: they would be lost",
            task.branch
        ))
        .hint("Merge the task first, or discard it with --force."));
    }
    // Checked before anything is removed, so a refusal removes nothing.
    let mut merged = git(project);
    merged.args(["merge-base", "--is-ancestor", &task.branch, "HEAD"]);
    if !force && run(merged, "see whether the task was merged").is_err() {
        return Err(Error::invalid_input(format!(
            "`{}` is not merged: its commits would be lost",
            task.branch
        ))
        .hint("Merge the task first, or discard it with --force."));
    }
    let mut remove = git(project);
    remove.args(["worktree", "remove"]);
    if force {
        remove.arg("--force");
    }
    remove.arg(&task.path);
    run(remove, "remove the task's worktree")?;
    let mut branch = git(project);
    branch.args(["branch", if force { "-D" } else { "-d" }, &task.branch]);
    run(branch, "remove the task's branch")?;
    Ok(task)
}

#[cfg(test)]
mod tests {
    // Fixtures in temporary folders, and the git they are made with.
    #![allow(clippy::unwrap_used, clippy::disallowed_methods)]
    use super::*;

    fn repository() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let ok = Command::new("git")
                .arg("-C")
                .arg(dir.path())
                .args(["-c", "user.name=t", "-c", "user.email=t@t"])
                .args(args)
                .status()
                .unwrap();
            assert!(ok.success(), "{args:?}");
        };
        git(&["init", "--quiet"]);
        std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
        git(&["add", "a.txt"]);
        git(&["commit", "--quiet", "-m", "first"]);
        dir
    }

    #[test]
    fn a_slug_is_a_branch_s_plain_last_part() {
        assert_eq!(slug("Fix the typo!"), "fix-the-typo");
        assert_eq!(slug("../../etc"), "etc");
        assert_eq!(slug("  "), "task");
        assert_eq!(slug(&"x".repeat(100)).len(), SLUG_CHARS);
    }

    /// The worktree is outside the project, on its own branch, with the
    /// project's files; a second task of the same name gets a number; the
    /// repository's post-checkout hook does not run.
    #[test]
    fn a_worktree_is_made_beside_never_inside_and_runs_no_hook() {
        let project = repository();
        let hook = project.path().join(".git/hooks/post-checkout");
        let ran = project.path().join("hook-ran");
        std::fs::write(&hook, format!("#!/bin/sh\ntouch '{}'\n", ran.display())).unwrap();
        let mut perms = std::fs::metadata(&hook).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        std::fs::set_permissions(&hook, perms).unwrap();
        let data = tempfile::tempdir().unwrap();
        let first = make(project.path(), data.path(), "Fix typo").unwrap();
        assert_eq!(first.branch, "corral/fix-typo");
        assert!(first.path.starts_with(data.path()));
        assert!(!first.path.starts_with(project.path()));
        assert_eq!(
            std::fs::read_to_string(first.path.join("a.txt")).unwrap(),
            "one\n"
        );
        let second = make(project.path(), data.path(), "Fix typo").unwrap();
        assert_eq!(second.branch, "corral/fix-typo-2");
        assert!(!ran.exists(), "the repository's post-checkout hook ran");
    }

    /// A task's changes land in the project as one merge; a second task
    /// that changed the same line conflicts, leaves the project as it was,
    /// and is discarded only with force.
    #[test]
    fn tasks_are_listed_merged_and_discarded() {
        let project = repository();
        let data = tempfile::tempdir().unwrap();
        let one = make(project.path(), data.path(), "one").unwrap();
        let two = make(project.path(), data.path(), "two").unwrap();
        std::fs::write(one.path.join("a.txt"), "one from task one\n").unwrap();
        std::fs::write(two.path.join("a.txt"), "one from task two\n").unwrap();
        let listed = list(project.path()).unwrap();
        let branches: Vec<(&str, bool)> = listed
            .iter()
            .map(|t| (t.branch.as_str(), t.changed))
            .collect();
        assert_eq!(branches, [("corral/one", true), ("corral/two", true)]);

        let merged = merge(project.path(), "one").unwrap();
        assert_eq!(merged.branch, "corral/one");
        assert_eq!(
            std::fs::read_to_string(project.path().join("a.txt")).unwrap(),
            "one from task one\n"
        );

        let e = merge(project.path(), "corral/two").unwrap_err();
        assert!(
            e.message.contains("conflicts") && e.message.contains("a.txt"),
            "{}",
            e.message
        );
        assert_eq!(
            std::fs::read_to_string(project.path().join("a.txt")).unwrap(),
            "one from task one\n"
        );
        let mut status = git(project.path());
        status.args(["status", "--porcelain"]);
        assert_eq!(run(status, "status").unwrap(), "");

        // Committed on its branch by the merge that failed: not "changed",
        // but not merged either, so only force removes it.
        assert!(discard(project.path(), "two", false).is_err());
        assert!(two.path.exists(), "a refused discard removed the worktree");
        discard(project.path(), "two", true).unwrap();
        assert!(!two.path.exists());
        let left: Vec<String> = list(project.path())
            .unwrap()
            .into_iter()
            .map(|t| t.branch)
            .collect();
        assert_eq!(left, ["corral/one"]);
        // A merged task goes without force.
        discard(project.path(), "one", false).unwrap();
        assert!(!one.path.exists());
        assert!(list(project.path()).unwrap().is_empty());
        assert_eq!(
            find(project.path(), "nope").unwrap_err().code,
            ErrorCode::NotFound
        );
    }

    #[test]
    fn a_folder_that_is_not_a_repository_is_told_to_run_in_place() {
        let project = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let e = make(project.path(), data.path(), "x").unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidInput);
        assert!(e.message.contains("not a git repository"), "{}", e.message);
    }
}
