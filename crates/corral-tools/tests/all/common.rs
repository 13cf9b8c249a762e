//! A real temp folder with a `ProjectRoot` on it, and a sibling outside it.

use corral_tools::dispatch::{self, CallContext};
use corral_tools::policy::{Approval, Mode};
use corral_tools::{Error, ProjectRoot};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// `<tmp>/app` is the project; `<tmp>/outside` holds things it must never reach.
pub struct Project {
    pub tmp: tempfile::TempDir,
    pub root: ProjectRoot,
}

impl Project {
    pub fn new() -> Project {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join("app")).unwrap();
        std::fs::create_dir(tmp.path().join("outside")).unwrap();
        std::fs::write(tmp.path().join("outside/secret.txt"), "outside secret\n").unwrap();
        let root = ProjectRoot::open(tmp.path().join("app")).unwrap();
        Project { tmp, root }
    }

    /// Absolute path of something inside the project.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.tmp.path().join("app").join(rel)
    }

    /// Absolute path of something outside the project.
    pub fn outside(&self, rel: &str) -> PathBuf {
        self.tmp.path().join("outside").join(rel)
    }

    pub fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) {
        let path = self.path(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(path, bytes).unwrap();
    }

    pub fn read(&self, rel: &str) -> Vec<u8> {
        std::fs::read(self.path(rel)).unwrap()
    }

    /// Runs a tool in full_auto mode, approved: what is left are the hard
    /// rules, which hold whatever the policy says.
    pub fn call(&self, name: &str, input: Value) -> Result<Value, Error> {
        dispatch::call(
            &self.root,
            name,
            input,
            &CallContext::new(Mode::FullAuto, Approval::Granted),
        )
    }

    /// Runs a tool and returns the error code it must fail with.
    pub fn code(&self, name: &str, input: Value) -> String {
        match self.call(name, input.clone()) {
            Ok(out) => panic!("{name} {input} should fail, got {out}"),
            Err(e) => e.code.as_str().to_string(),
        }
    }

    /// Every file under the outside folder, with contents: to check nothing changed.
    pub fn outside_snapshot(&self) -> Vec<(PathBuf, Vec<u8>)> {
        snapshot(&self.tmp.path().join("outside"))
    }
}

pub fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let entry = entry.unwrap();
            let ft = entry.file_type().unwrap();
            if ft.is_dir() {
                stack.push(entry.path());
            } else if ft.is_file() {
                out.push((entry.path(), std::fs::read(entry.path()).unwrap()));
            } else {
                out.push((entry.path(), Vec::new()));
            }
        }
    }
    out.sort();
    out
}
