//! A project for a test: a temp folder holding `project/` and, beside it,
//! the host's `config/` and `data/` folders (so nothing a host keeps lands
//! in the project), deleted with the value.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A temp folder with the project in `project/`.
pub struct Project {
    tmp: tempfile::TempDir,
    root: PathBuf,
}

impl Default for Project {
    fn default() -> Self {
        Project::new()
    }
}

impl Project {
    /// An empty project.
    pub fn new() -> Project {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("project");
        std::fs::create_dir(&root).unwrap();
        Project { tmp, root }
    }

    /// Adds the file `rel` (its folders made) with `content`.
    pub fn file(self, rel: &str, content: impl AsRef<[u8]>) -> Project {
        self.write(rel, content);
        self
    }

    /// Adds the (empty) folder `rel` and its parents.
    pub fn folder(self, rel: &str) -> Project {
        std::fs::create_dir_all(self.root.join(rel)).unwrap();
        self
    }

    /// Makes the project a git repository with everything in it committed.
    pub fn git(self) -> Project {
        let git = |args: &[&str]| {
            let out = Command::new("git")
                .args(args)
                .current_dir(&self.root)
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .output()
                .unwrap();
            assert!(out.status.success(), "git {args:?}: {out:?}");
        };
        git(&["init", "-q", "-b", "main"]);
        git(&["add", "-A"]);
        git(&[
            "-c",
            "user.name=Corral Test",
            "-c",
            "user.email=test@corral.invalid",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "fixture",
        ]);
        self
    }

    /// Writes `rel` in the project now, its folders made.
    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) {
        let path = self.root.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(path, content).unwrap();
    }

    /// The text of `rel` in the project, if it is there.
    pub fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.root.join(rel)).ok()
    }

    /// The project's folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The temp folder around the project.
    pub fn tmp(&self) -> &Path {
        self.tmp.path()
    }

    /// The host's config folder, beside the project (made on first write).
    pub fn config_dir(&self) -> PathBuf {
        self.tmp.path().join("config")
    }

    /// The host's data folder (checkpoints, history, the index), beside the
    /// project.
    pub fn data_dir(&self) -> PathBuf {
        self.tmp.path().join("data")
    }

    /// A folder outside the project, made now, for what must stay out of
    /// the agent's reach.
    pub fn outside(&self) -> PathBuf {
        let outside = self.tmp.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        outside
    }
}
