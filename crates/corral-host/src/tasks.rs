//! A project's tasks in one host: each task is a session opened on its
//! worktree ([`crate::worktree`]) the first time it is asked for, judged
//! with the project's own settings (its programs, saved rules and hooks'
//! trust are the project's, whatever folder the task works in). Every
//! task's commands run in the host's process, so they share its sandbox
//! budget with the project's own.

use crate::wire::{parse, to_value};
use crate::worktree::{self, DiffSize, Side, Task, Worktree};
use corral_session::{Options, Session, Settings};
use corral_tools::policy::Mode;
use corral_tools::shell::SavedRule;
use corral_tools::{Error, ErrorCode};
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

/// Whether `command` is one of the tasks' own commands ([`Tasks::answer`]):
/// they are all named `task_…`, and none of them is in the loop's table.
pub fn is_task_command(command: &str) -> bool {
    command.starts_with("task_") && !crate::is_command(command)
}

/// The project's settings, for a session opened on one of its worktrees:
/// every question about a root is asked about the project's.
pub struct TaskSettings {
    pub inner: Arc<dyn Settings>,
    pub project: PathBuf,
}

impl Settings for TaskSettings {
    fn mode(&self) -> Mode {
        self.inner.mode()
    }
    fn shell_grants(&self, _root: &Path) -> (Vec<String>, Vec<SavedRule>) {
        self.inner.shell_grants(&self.project)
    }
    fn save_rule(&self, _root: &Path, rule: SavedRule) -> Result<(), Error> {
        self.inner.save_rule(&self.project, rule)
    }
    fn home(&self) -> Option<PathBuf> {
        self.inner.home()
    }
    fn hooks_trusted(&self, _root: &Path, file: &str, text: &str) -> bool {
        self.inner.hooks_trusted(&self.project, file, text)
    }
    fn trust_hooks(&self, _root: &Path, file: &str, text: &str) -> Result<(), Error> {
        self.inner.trust_hooks(&self.project, file, text)
    }
}

/// A task as a host lists it: its worktree and branch, and how much it
/// changed against where it started.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, ts_rs::TS)]
pub struct TaskInfo {
    /// Its name: the branch's part after `corral/`.
    pub name: String,
    pub branch: String,
    /// Its worktree.
    #[ts(type = "string")]
    pub path: PathBuf,
    /// It holds changes not committed on its branch yet.
    pub changed: bool,
    /// Its whole change against where it started.
    pub size: DiffSize,
}

impl TaskInfo {
    fn of(task: Task, size: DiffSize) -> TaskInfo {
        TaskInfo {
            name: task
                .branch
                .strip_prefix("corral/")
                .unwrap_or(&task.branch)
                .to_string(),
            branch: task.branch,
            path: task.path,
            changed: task.changed,
            size,
        }
    }
}

/// The tasks of one project open in a host.
pub struct Tasks {
    project: PathBuf,
    data: PathBuf,
    settings: Arc<dyn Settings>,
    /// How a task's session is opened (as the project's, but on its worktree).
    options: Box<dyn Fn() -> Options + Send + Sync>,
    /// Each task's session, by name, once asked for.
    open: Mutex<HashMap<String, Arc<Session>>>,
}

impl Tasks {
    /// The tasks of `project`, their worktrees under `data`, each session
    /// opened with `options` and the project's `settings`.
    pub fn new(
        project: &Path,
        data: &Path,
        settings: Arc<dyn Settings>,
        options: impl Fn() -> Options + Send + Sync + 'static,
    ) -> Tasks {
        Tasks {
            project: project.to_path_buf(),
            data: data.to_path_buf(),
            settings,
            options: Box::new(options),
            open: Mutex::default(),
        }
    }

    /// The project's folder.
    pub fn project(&self) -> &Path {
        &self.project
    }

    /// Where the task `name`'s worktree is (or would be made).
    pub fn folder(&self, name: &str) -> PathBuf {
        worktree::home_of(&self.project, &self.data).join(name)
    }

    /// Makes a new task's worktree (see [`worktree::make`]).
    pub fn make(&self, name: &str) -> Result<TaskInfo, Error> {
        let Worktree { path, branch } = worktree::make(&self.project, &self.data, name)?;
        let task = Task {
            path,
            branch,
            changed: false,
        };
        Ok(TaskInfo::of(task, DiffSize::default()))
    }

    /// Every task of the project, with the size of its change (those a
    /// crash or an earlier run left too: the worktrees are git's).
    pub fn list(&self) -> Result<Vec<TaskInfo>, Error> {
        worktree::list(&self.project)?
            .into_iter()
            .map(|task| {
                let size = worktree::size(&self.project, &task).unwrap_or_default();
                Ok(TaskInfo::of(task, size))
            })
            .collect()
    }

    /// The task `name`'s session, opened on its worktree the first time.
    /// `not_found` for a name that is no task of the project.
    pub fn session(&self, name: &str) -> Result<Arc<Session>, Error> {
        if let Some(open) = self.lock().get(name) {
            return Ok(open.clone());
        }
        let branch = format!("corral/{name}");
        let task = worktree::list(&self.project)?
            .into_iter()
            .find(|t| t.branch == branch)
            .ok_or_else(|| {
                Error::new(ErrorCode::NotFound, format!("there is no task `{name}`"))
                    .hint("Start it again from New task, or pick one from the task list.")
            })?;
        let settings = Arc::new(TaskSettings {
            inner: self.settings.clone(),
            project: self.project.clone(),
        });
        let session = Arc::new(Session::open(&task.path, settings, (self.options)())?);
        // Two first asks at once: the first one kept wins.
        Ok(self
            .lock()
            .entry(name.to_string())
            .or_insert(session)
            .clone())
    }

    /// Ends the task `name`'s session (its commands stop), if open: before
    /// its worktree goes.
    pub fn close(&self, name: &str) {
        let closed = self.lock().remove(name);
        drop(closed);
    }

    /// The answer to one of the tasks' own commands (`task_new`,
    /// `task_list`, `task_diff`, `task_merge`, `task_apply`, `task_push`,
    /// `task_discard`; docs/ipc.md, Tasks), the same wherever the project
    /// is: the window here, serve for a remote project. `None` for any
    /// other command. Blocking (git): call it off the async runtime.
    pub fn answer(&self, command: &str, args: Value) -> Option<Result<Value, Error>> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Named {
            name: String,
        }
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Landing {
            task: String,
            #[serde(default)]
            prefer: Option<Side>,
            #[serde(default)]
            remote: Option<String>,
            #[serde(default)]
            force: bool,
            /// The files that run by themselves the user named to land.
            #[serde(default)]
            auto_run: Vec<String>,
        }
        let task = |args: Value| parse::<Landing>(command, args);
        let project = self.project.as_path();
        Some(match command {
            "task_new" => parse::<Named>(command, args).and_then(|a| to_value(self.make(&a.name)?)),
            "task_list" => self.list().and_then(to_value),
            "task_diff" => task(args).and_then(|a| to_value(worktree::diff(project, &a.task)?)),
            "task_merge" => task(args).and_then(|a| {
                let merged = worktree::merge(project, &a.task, a.prefer, &a.auto_run)?;
                if merged.removed {
                    self.close(&a.task);
                }
                to_value(merged)
            }),
            "task_apply" => {
                task(args).and_then(|a| to_value(worktree::apply(project, &a.task, &a.auto_run)?))
            }
            "task_push" => task(args)
                .and_then(|a| to_value(worktree::push(project, &a.task, a.remote.as_deref())?)),
            "task_discard" => task(args).and_then(|a| {
                // Its commands stop before its folder goes.
                self.close(&a.task);
                worktree::discard(project, &a.task, a.force).map(|_| Value::Null)
            }),
            _ => return None,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Session>>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    // Fixtures in temporary folders, and the git they are made with.
    #![allow(clippy::unwrap_used, clippy::disallowed_methods)]
    use super::*;
    use crate::worktree::tests::repository;
    use corral_session::{Consent, Fixed, RunContext};
    use serde_json::json;

    /// A task's session sees its worktree as the project: a write lands
    /// there, never in the project's folder, and a path out of the
    /// worktree (the project's folder, another task's) is refused.
    #[tokio::test]
    async fn a_task_s_tools_see_its_worktree_as_the_project() {
        let project = repository();
        let data = tempfile::tempdir().unwrap();
        let settings = Arc::new(Fixed {
            mode: Mode::FullAuto,
            ..Fixed::default()
        });
        let tasks = Tasks::new(project.path(), data.path(), settings, Options::default);
        let one = tasks.make("one").unwrap();
        let two = tasks.make("two").unwrap();
        assert_eq!(
            (one.name.as_str(), one.branch.as_str()),
            ("one", "corral/one")
        );
        let session = tasks.session("one").unwrap();
        assert!(Arc::ptr_eq(&session, &tasks.session("one").unwrap()));
        let run = |input: serde_json::Value| {
            let session = session.clone();
            async move {
                let call = corral_session::Call::new("write_file", input);
                let (consent, run) = (Consent::default(), RunContext::default());
                session.call(call, consent, run).await
            }
        };
        run(json!({"path": "b.txt", "content": "from one\n"}))
            .await
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(one.path.join("b.txt")).unwrap(),
            "from one\n"
        );
        assert!(!project.path().join("b.txt").exists());
        for outside in [project.path().join("c.txt"), two.path.join("c.txt")] {
            let e = run(json!({"path": outside, "content": "x"}))
                .await
                .unwrap_err();
            assert_eq!(e.code, ErrorCode::PathOutsideRoot, "{}", e.message);
            assert!(!outside.exists());
        }
        let listed = tasks.list().unwrap();
        assert_eq!(listed.len(), 2);
        assert_eq!(listed[0].size.files, 1);
        let missing = tasks.session("nope").err().map(|e| e.code);
        assert_eq!(missing, Some(ErrorCode::NotFound));
    }
}
