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
pub(crate) fn home_of(project: &Path, data: &Path) -> PathBuf {
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
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, ts_rs::TS)]
pub struct Merged {
    pub branch: String,
    pub commit: String,
    /// Its worktree and branch were removed after the merge (they stay
    /// where git would not remove them cleanly).
    pub removed: bool,
}

/// Which side wins where the task and the project changed the same lines
/// (git's `-X theirs` for the task, `-X ours` for the project).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    Task,
    Project,
}

/// Commits what the task's worktree holds uncommitted on its branch.
fn commit_changes(task: &Task) -> Result<(), Error> {
    if !task.changed {
        return Ok(());
    }
    let mut add = git(&task.path);
    add.args(["add", "--all"]);
    run(add, "stage the task's changes")?;
    let mut commit = committing(&task.path);
    commit
        .args(["commit", "--quiet", "--no-verify", "-m"])
        .arg(format!("{}: the task's changes", task.branch));
    run(commit, "commit the task's changes")?;
    Ok(())
}

/// The files git left conflicted in `project`.
fn conflicted(project: &Path) -> Vec<String> {
    let mut conflicted = git(project);
    conflicted.args(["diff", "--name-only", "--diff-filter=U"]);
    run(conflicted, "list the conflicts")
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// The error of a task that conflicts with the project in `files`.
fn conflict(task: &Task, files: Vec<String>, what: &str) -> Error {
    Error::new(
        ErrorCode::Io,
        format!(
            "`{}` conflicts with the project in {}: nothing was {what}",
            task.branch,
            files.join(", ")
        ),
    )
    .hint("Choose whose lines win (the task's or the project's) and merge again, or settle it in the task's worktree.")
    .detail("files", files)
}

/// The files `task` adds or changes that another program runs or loads by
/// itself (`corral_fs::autorun`), with what runs each: `.vscode/tasks.json`,
/// `.envrc`, `.husky/…`. Inside the task they were written under the
/// task's own fence, which does not hold them everywhere (a container's
/// Landlock fence does not), and once landed in the project the user's
/// editor, shell or git runs them.
fn auto_run_changes(project: &Path, task: &Task) -> Result<Vec<(String, String)>, Error> {
    let (_, _, files) = changes(project, task)?;
    Ok(files
        .into_iter()
        .filter(|(status, _)| status != "D")
        .filter_map(|(_, path)| {
            corral_fs::autorun::auto_run(&path).map(|row| (path, row.runs_it.to_string()))
        })
        .collect())
}

/// Refuses to land `task` while its change holds a file that runs by
/// itself and the user has not named it in `confirmed`: `approval_required`
/// listing each (`details.auto_run`: `{path, runs_it}`), so the host shows
/// them and asks again with their names.
fn check_auto_run(
    project: &Path,
    task: &Task,
    confirmed: &[String],
    what: &str,
) -> Result<(), Error> {
    let unconfirmed: Vec<(String, String)> = auto_run_changes(project, task)?
        .into_iter()
        .filter(|(path, _)| !confirmed.contains(path))
        .collect();
    if unconfirmed.is_empty() {
        return Ok(());
    }
    let names: Vec<&str> = unconfirmed.iter().map(|(p, _)| p.as_str()).collect();
    Err(Error::new(
        ErrorCode::ApprovalRequired,
        format!(
            "`{}` changes files that run by themselves once they are in the project: {}. Nothing was {what}",
            task.branch,
            names.join(", ")
        ),
    )
    .hint("Read them in the task's review, then land it again naming each of them.")
    .detail(
        "auto_run",
        unconfirmed
            .iter()
            .map(|(path, runs_it)| serde_json::json!({"path": path, "runs_it": runs_it}))
            .collect::<Vec<_>>(),
    ))
}

/// Lands the task `name` in the project: what its worktree holds
/// uncommitted is committed on its branch first, then the branch is
/// merged into the project's current branch (a merge commit). A conflict
/// leaves the project as it was (`git merge --abort`) and fails
/// `conflict` naming the files; the task stays for the user to settle, or
/// to merge again with `prefer` (whose lines win where both changed).
/// A change to a file that runs by itself lands only when `confirmed`
/// names it ([`check_auto_run`]).
pub fn merge(
    project: &Path,
    name: &str,
    prefer: Option<Side>,
    confirmed: &[String],
) -> Result<Merged, Error> {
    let task = find(project, name)?;
    check_auto_run(project, &task, confirmed, "merged")?;
    commit_changes(&task)?;
    let mut merge = committing(project);
    merge.args(["merge", "--no-ff", "--no-edit", "--quiet"]);
    match prefer {
        Some(Side::Task) => merge.args(["-X", "theirs"]),
        Some(Side::Project) => merge.args(["-X", "ours"]),
        None => &mut merge,
    };
    merge.arg(&task.branch);
    if let Err(e) = run(merge, "merge the task") {
        let files = conflicted(project);
        let mut abort = git(project);
        abort.args(["merge", "--abort"]);
        let _ = run(abort, "undo the merge");
        return Err(if files.is_empty() {
            e
        } else {
            conflict(&task, files, "merged")
        });
    }
    let mut head = git(project);
    head.args(["rev-parse", "HEAD"]);
    let commit = run(head, "read the merge commit")?;
    // Landed, the task is done: its worktree and branch go (all it held
    // was committed and merged, so nothing is lost).
    let removed = discard(project, name, false).is_ok();
    Ok(Merged {
        branch: task.branch,
        commit,
        removed,
    })
}

/// What an apply did: the files it changed in the project, left there
/// uncommitted (staged) for the user to commit.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, ts_rs::TS)]
pub struct Applied {
    pub branch: String,
    pub files: Vec<String>,
}

/// Puts the task `name`'s changes in the project as uncommitted changes
/// (`git merge --squash`): nothing is committed there. The project must
/// hold no uncommitted changes of its own, so a conflict can be undone
/// whole: it then fails `conflict` and the project is as it was. A file
/// that runs by itself lands only when `confirmed` names it.
pub fn apply(project: &Path, name: &str, confirmed: &[String]) -> Result<Applied, Error> {
    let task = find(project, name)?;
    let mut status = git(project);
    status.args(["status", "--porcelain", "--untracked-files=no"]);
    if !run(status, "read the project's changes")?.is_empty() {
        return Err(Error::invalid_input(
            "the project holds uncommitted changes of its own: applying the task beside them could not be undone whole",
        )
        .hint("Commit or stash the project's changes, or merge the task instead."));
    }
    check_auto_run(project, &task, confirmed, "applied")?;
    commit_changes(&task)?;
    let mut squash = git(project);
    squash.args(["merge", "--squash", "--quiet", &task.branch]);
    if let Err(e) = run(squash, "apply the task") {
        let files = conflicted(project);
        // The project held nothing uncommitted: back to its commit whole.
        let mut reset = git(project);
        reset.args(["reset", "--hard", "--quiet"]);
        let _ = run(reset, "undo the apply");
        return Err(if files.is_empty() {
            e
        } else {
            conflict(&task, files, "applied")
        });
    }
    let mut staged = git(project);
    staged.args(["diff", "--cached", "--name-only"]);
    Ok(Applied {
        branch: task.branch,
        files: run(staged, "list what was applied")?
            .lines()
            .map(str::to_string)
            .collect(),
    })
}

/// Pushes the task `name`'s branch (its uncommitted changes committed
/// first) to `remote` (`origin` when `None`), through the user's git and
/// its credentials. Answers git's own words.
pub fn push(project: &Path, name: &str, remote: Option<&str>) -> Result<String, Error> {
    let task = find(project, name)?;
    let remote = remote.unwrap_or("origin");
    if remote.starts_with('-') || remote.is_empty() {
        return Err(Error::invalid_input(format!(
            "`{remote}` is not a remote's name"
        )));
    }
    commit_changes(&task)?;
    let mut push = git(project);
    push.args(["push", "--porcelain", remote, &task.branch]);
    run(push, "push the task's branch")
}

/// One file a task changed against the commit it started from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, ts_rs::TS)]
pub struct TaskFile {
    pub path: String,
    /// `added`, `modified` or `deleted`.
    pub status: String,
    /// Its text at the base (`null`: absent, or not text).
    pub before: Option<String>,
    /// Its text in the task (`null`: absent, or not text).
    pub after: Option<String>,
    /// What runs it by itself once it is in the project (`null`: nothing):
    /// landing it needs the user to name it.
    pub auto_run: Option<String>,
}

/// A task's whole change against the commit it started from: what its
/// branch committed and what its worktree holds uncommitted alike.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, ts_rs::TS)]
pub struct TaskDiff {
    pub branch: String,
    /// The commit it started from (where its branch and the project's meet).
    pub base: String,
    pub files: Vec<TaskFile>,
}

/// A file's text larger than this is shown as not text.
const SHOWN_BYTES: usize = 1 << 20;

/// The tree of what `task`'s worktree holds now, committed or not, made
/// through an index of its own (the worktree's own index is untouched).
fn tree_now(task: &Task) -> Result<String, Error> {
    let mut index_at = git(&task.path);
    index_at.args(["rev-parse", "--git-path", "index"]);
    let index = PathBuf::from(run(index_at, "find the task's index")?);
    let index = if index.is_absolute() {
        index
    } else {
        task.path.join(index)
    };
    let scratch = tempfile::NamedTempFile::new().map_err(|e| {
        Error::new(
            ErrorCode::Io,
            format!("could not make a scratch index: {e}"),
        )
    })?;
    // Copied so unchanged files are not read again (a missing one: fresh).
    #[allow(clippy::disallowed_methods)]
    let _ = std::fs::copy(&index, scratch.path());
    let staged = |args: &[&str], what: &str| {
        let mut command = git(&task.path);
        command.env("GIT_INDEX_FILE", scratch.path()).args(args);
        run(command, what)
    };
    staged(&["add", "--all"], "read the task's files")?;
    staged(&["write-tree"], "record the task's files")
}

/// Where a task started, the tree it holds now, and each file it changed
/// between them (`A`, `D` or `M`, and its path).
type Changes = (String, String, Vec<(String, String)>);

/// `task`'s [`Changes`].
fn changes(project: &Path, task: &Task) -> Result<Changes, Error> {
    let mut meet = git(project);
    meet.args(["merge-base", "HEAD", &task.branch]);
    let base = run(meet, "find where the task started")?;
    let tree = tree_now(task)?;
    let mut changed = git(project);
    changed.args(["diff", "--name-status", "--no-renames", "-z", &base, &tree]);
    let listed = run(changed, "list the task's changes")?;
    let mut files = Vec::new();
    let mut fields = listed.split('\0').filter(|f| !f.is_empty());
    while let (Some(status), Some(path)) = (fields.next(), fields.next()) {
        files.push((status.to_string(), path.to_string()));
    }
    Ok((base, tree, files))
}

/// The task `name`'s whole diff against the commit it started from.
pub fn diff(project: &Path, name: &str) -> Result<TaskDiff, Error> {
    let task = find(project, name)?;
    let (base, tree, changed) = changes(project, &task)?;
    let show = |object: &str, path: &str| {
        let mut cat = git(project);
        cat.args(["cat-file", "blob", &format!("{object}:{path}")]);
        let out = cat.output().ok().filter(|o| o.status.success())?;
        (out.stdout.len() <= SHOWN_BYTES && !out.stdout.contains(&0))
            .then(|| String::from_utf8(out.stdout).ok())
            .flatten()
    };
    let files = changed
        .into_iter()
        .map(|(status, path)| {
            let status = match status.as_str() {
                "A" => "added",
                "D" => "deleted",
                _ => "modified",
            };
            TaskFile {
                before: (status != "added").then(|| show(&base, &path)).flatten(),
                after: (status != "deleted").then(|| show(&tree, &path)).flatten(),
                auto_run: corral_fs::autorun::auto_run(&path).map(|row| row.runs_it.to_string()),
                status: status.to_string(),
                path,
            }
        })
        .collect();
    Ok(TaskDiff {
        branch: task.branch,
        base,
        files,
    })
}

/// How much a task changed against its base: files, lines added and removed.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, ts_rs::TS,
)]
pub struct DiffSize {
    pub files: u32,
    pub added: u32,
    pub removed: u32,
}

/// The size of task `name`'s whole change against its base.
pub fn size(project: &Path, task: &Task) -> Result<DiffSize, Error> {
    let mut meet = git(project);
    meet.args(["merge-base", "HEAD", &task.branch]);
    let base = run(meet, "find where the task started")?;
    let tree = tree_now(task)?;
    let mut numstat = git(project);
    numstat.args(["diff", "--numstat", "--no-renames", &base, &tree]);
    let mut size = DiffSize::default();
    for line in run(numstat, "count the task's changes")?.lines() {
        let mut parts = line.split('\t');
        let number = |p: Option<&str>| p.and_then(|n| n.parse::<u32>().ok()).unwrap_or(0);
        size.files += 1;
        size.added += number(parts.next());
        size.removed += number(parts.next());
    }
    Ok(size)
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
pub(crate) mod tests {
    // Fixtures in temporary folders, and the git they are made with.
    #![allow(clippy::unwrap_used, clippy::disallowed_methods)]
    use super::*;

    /// A repository with one commit of `a.txt` ("one\n").
    pub(crate) fn repository() -> tempfile::TempDir {
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

        let merged = merge(project.path(), "one", None, &[]).unwrap();
        assert_eq!(merged.branch, "corral/one");
        assert!(merged.removed && !one.path.exists(), "a merged task stays");
        assert_eq!(
            std::fs::read_to_string(project.path().join("a.txt")).unwrap(),
            "one from task one\n"
        );

        let e = merge(project.path(), "corral/two", None, &[]).unwrap_err();
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
        assert!(list(project.path()).unwrap().is_empty());
        assert_eq!(
            find(project.path(), "nope").unwrap_err().code,
            ErrorCode::NotFound
        );
    }

    /// A task that adds or changes a file another program runs by itself
    /// (here a VS Code task that runs when the folder opens, and a husky
    /// hook in a package) lands only when the user names each: merge and
    /// apply refuse with the files and what runs them, the project is as
    /// it was, the review marks them, and naming one is not naming both.
    #[test]
    fn a_file_that_runs_by_itself_lands_only_when_named() {
        let project = repository();
        let data = tempfile::tempdir().unwrap();
        let task = make(project.path(), data.path(), "hooks").unwrap();
        std::fs::create_dir_all(task.path.join(".vscode")).unwrap();
        std::fs::write(
            task.path.join(".vscode/tasks.json"),
            r#"{"tasks":[{"command":"sh evil","runOptions":{"runOn":"folderOpen"}}]}"#,
        )
        .unwrap();
        std::fs::create_dir_all(task.path.join("pkg/.husky")).unwrap();
        std::fs::write(task.path.join("pkg/.husky/pre-commit"), "sh evil\n").unwrap();
        std::fs::write(task.path.join("a.txt"), "changed\n").unwrap();

        let review = diff(project.path(), "hooks").unwrap();
        let marked: Vec<&str> = review
            .files
            .iter()
            .filter(|f| f.auto_run.is_some())
            .map(|f| f.path.as_str())
            .collect();
        assert_eq!(marked, [".vscode/tasks.json", "pkg/.husky/pre-commit"]);

        let head = |dir: &Path| {
            let mut head = git(dir);
            head.args(["rev-parse", "HEAD"]);
            run(head, "head").unwrap()
        };
        let before = head(project.path());
        for e in [
            merge(project.path(), "hooks", None, &[]).unwrap_err(),
            apply(project.path(), "hooks", &[]).unwrap_err(),
            merge(
                project.path(),
                "hooks",
                None,
                &[".vscode/tasks.json".to_string()],
            )
            .unwrap_err(),
        ] {
            assert_eq!(e.code, ErrorCode::ApprovalRequired, "{}", e.message);
            let named: Vec<&str> = e.details["auto_run"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["path"].as_str().unwrap())
                .collect();
            assert!(named.contains(&"pkg/.husky/pre-commit"), "{named:?}");
            assert!(e.details["auto_run"][0]["runs_it"].as_str().is_some());
            assert_eq!(head(project.path()), before);
            assert!(!project.path().join(".vscode").exists());
            assert!(!project.path().join("pkg").exists());
        }
        let mut status = git(project.path());
        status.args(["status", "--porcelain"]);
        assert_eq!(run(status, "status").unwrap(), "");

        let both = [
            ".vscode/tasks.json".to_string(),
            "pkg/.husky/pre-commit".to_string(),
        ];
        merge(project.path(), "hooks", None, &both).unwrap();
        assert!(project.path().join(".vscode/tasks.json").exists());
    }

    /// A conflict settled by choosing a side: the task's lines win, the
    /// project's own other changes stay, and the history has one merge.
    #[test]
    fn a_conflict_is_settled_by_choosing_whose_lines_win() {
        let project = repository();
        let data = tempfile::tempdir().unwrap();
        let one = make(project.path(), data.path(), "one").unwrap();
        let two = make(project.path(), data.path(), "two").unwrap();
        std::fs::write(one.path.join("a.txt"), "one from task one\n").unwrap();
        std::fs::write(two.path.join("a.txt"), "one from task two\n").unwrap();
        std::fs::write(two.path.join("b.txt"), "new in two\n").unwrap();
        merge(project.path(), "one", None, &[]).unwrap();
        let e = merge(project.path(), "two", None, &[]).unwrap_err();
        assert_eq!(e.details["files"], serde_json::json!(["a.txt"]));
        merge(project.path(), "two", Some(Side::Task), &[]).unwrap();
        let read = |name: &str| std::fs::read_to_string(project.path().join(name)).unwrap();
        assert_eq!(read("a.txt"), "one from task two\n");
        assert_eq!(read("b.txt"), "new in two\n");
        let mut merges = git(project.path());
        merges.args(["rev-list", "--merges", "--count", "HEAD"]);
        assert_eq!(run(merges, "count").unwrap(), "2");
    }

    /// The diff holds committed, uncommitted, new and removed files, the
    /// worktree's own index untouched; its size counts the same.
    #[test]
    fn a_task_s_diff_is_all_it_changed_against_where_it_started() {
        let project = repository();
        let data = tempfile::tempdir().unwrap();
        let task = make(project.path(), data.path(), "d").unwrap();
        std::fs::write(task.path.join("a.txt"), "changed\n").unwrap();
        std::fs::write(task.path.join("new.txt"), "new\nfile\n").unwrap();
        std::fs::write(task.path.join("blob.bin"), [0u8, 1, 2]).unwrap();
        let mut status = git(&task.path);
        status.args(["status", "--porcelain"]);
        let before = run(status, "status").unwrap();
        let found = diff(project.path(), "d").unwrap();
        let files: Vec<(&str, &str, Option<&str>, Option<&str>)> = found
            .files
            .iter()
            .map(|f| {
                (
                    f.path.as_str(),
                    f.status.as_str(),
                    f.before.as_deref(),
                    f.after.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            files,
            [
                ("a.txt", "modified", Some("one\n"), Some("changed\n")),
                ("blob.bin", "added", None, None),
                ("new.txt", "added", None, Some("new\nfile\n")),
            ]
        );
        let mut status = git(&task.path);
        status.args(["status", "--porcelain"]);
        assert_eq!(run(status, "status").unwrap(), before, "the index moved");
        let listed = list(project.path()).unwrap();
        let size = size(project.path(), &listed[0]).unwrap();
        assert_eq!((size.files, size.added, size.removed), (3, 3, 1));
    }

    /// Applied, the task's changes wait uncommitted in the project; a
    /// project with changes of its own is refused and keeps them.
    #[test]
    fn an_applied_task_leaves_its_changes_uncommitted() {
        let project = repository();
        let data = tempfile::tempdir().unwrap();
        let task = make(project.path(), data.path(), "ap").unwrap();
        std::fs::write(task.path.join("c.txt"), "from the task\n").unwrap();
        std::fs::write(project.path().join("a.txt"), "mine\n").unwrap();
        let e = apply(project.path(), "ap", &[]).unwrap_err();
        assert!(e.message.contains("uncommitted"), "{}", e.message);
        assert_eq!(
            std::fs::read_to_string(project.path().join("a.txt")).unwrap(),
            "mine\n"
        );
        let mut restore = git(project.path());
        restore.args(["checkout", "--", "a.txt"]);
        run(restore, "restore").unwrap();
        let applied = apply(project.path(), "ap", &[]).unwrap();
        assert_eq!(applied.files, ["c.txt"]);
        let mut commits = git(project.path());
        commits.args(["rev-list", "--count", "HEAD"]);
        assert_eq!(run(commits, "count").unwrap(), "1", "apply committed");
        assert_eq!(
            std::fs::read_to_string(project.path().join("c.txt")).unwrap(),
            "from the task\n"
        );
    }

    /// Pushed, the task's branch (its changes committed) is on the remote.
    #[test]
    fn a_task_s_branch_is_pushed_with_its_changes() {
        let project = repository();
        let data = tempfile::tempdir().unwrap();
        let remote = tempfile::tempdir().unwrap();
        let mut bare = Command::new("git");
        bare.args(["init", "--quiet", "--bare"]).arg(remote.path());
        run(bare, "init").unwrap();
        let mut add = git(project.path());
        add.args(["remote", "add", "origin"]).arg(remote.path());
        run(add, "add the remote").unwrap();
        let task = make(project.path(), data.path(), "p").unwrap();
        std::fs::write(task.path.join("p.txt"), "pushed\n").unwrap();
        assert!(push(project.path(), "p", Some("--upload-pack=x")).is_err());
        push(project.path(), "p", None).unwrap();
        let mut show = git(remote.path());
        show.args(["show", "corral/p:p.txt"]);
        assert_eq!(run(show, "show").unwrap(), "pushed");
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
