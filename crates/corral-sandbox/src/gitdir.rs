//! Where the project's repository really is: its git dir (`.git/`, or
//! where a `.git` file's `gitdir:` leads) and its common dir (where the
//! git dir's `commondir` file leads), as git itself resolves them.
//!
//! git reads its config, and so the programs it runs (`diff.external`),
//! from those folders. Two ways to move them were found: `git init
//! --separate-git-dir=gd` makes `.git` a file leading to `gd/`, an
//! ordinary folder of the project the file tools may write; `git init
//! --template=tpl` plants `.git/commondir` leading to `../evil`. The
//! argument rules refuse both options; this module lets the profile and
//! the mount see a repository moved some other way: a git dir or common
//! dir inside the project but outside `.git/` is not the project's own
//! repository, so read-only git asks ([`Repository::is_plain`]), and the
//! mount binds both folders read-only for every program but git.

// Reads git's own pointers (`.git`, `commondir`) where git reads them,
// never a file a call names.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};

/// The project's repository, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Repository {
    /// `.git/`, or where the `.git` file leads.
    pub git_dir: PathBuf,
    /// Where `commondir` leads, else the git dir.
    pub common_dir: PathBuf,
}

impl Repository {
    /// The repository at `root` (`root/.git`, a folder or a `gitdir:`
    /// file), if there is one. Paths are made absolute, links resolved
    /// where they exist.
    pub(crate) fn of(root: &Path) -> Option<Repository> {
        let dot_git = root.join(".git");
        let meta = dot_git.symlink_metadata().ok()?;
        let git_dir = if meta.is_file() {
            let text = std::fs::read_to_string(&dot_git).ok()?;
            let target = text.lines().next()?.strip_prefix("gitdir:")?.trim();
            real(&root.join(target))
        } else {
            real(&dot_git)
        };
        let common_dir = match std::fs::read_to_string(git_dir.join("commondir")) {
            Ok(text) => real(&git_dir.join(text.lines().next().unwrap_or("").trim())),
            Err(_) => git_dir.clone(),
        };
        Some(Repository {
            git_dir,
            common_dir,
        })
    }

    /// Whether both folders are the project's own `.git/`: nothing the
    /// file tools or a command may write is read as git's config, and git
    /// reads no repository outside the project (a `.git` file a command
    /// wrote could lead to another project's history). A linked worktree's
    /// repository lies outside, so git there asks.
    pub(crate) fn is_plain(&self, root: &Path) -> bool {
        let own = real(root).join(".git");
        [&self.git_dir, &self.common_dir]
            .iter()
            .all(|dir| dir.starts_with(&own))
    }

    /// The folders to bind: the git dir and the common dir, one of them
    /// when it holds the other (a linked worktree's git dir lies in the
    /// common dir's `worktrees/`).
    pub(crate) fn folders(&self) -> Vec<&Path> {
        let (git, common) = (self.git_dir.as_path(), self.common_dir.as_path());
        if git.starts_with(common) {
            vec![common]
        } else if common.starts_with(git) {
            vec![git]
        } else {
            vec![git, common]
        }
    }
}

/// The path with its links resolved if it exists, else as given.
fn real(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::disallowed_methods)]
    use super::*;

    fn dir() -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let p = std::fs::canonicalize(d.path()).unwrap();
        (d, p)
    }

    #[test]
    fn a_git_folder_is_plain() {
        let (_d, root) = dir();
        std::fs::create_dir(root.join(".git")).unwrap();
        let repo = Repository::of(&root).unwrap();
        assert_eq!(repo.git_dir, root.join(".git"));
        assert_eq!(repo.common_dir, root.join(".git"));
        assert!(repo.is_plain(&root));
        assert_eq!(repo.folders(), vec![root.join(".git").as_path()]);
    }

    #[test]
    fn a_separate_git_dir_inside_the_project_is_not_plain() {
        let (_d, root) = dir();
        std::fs::create_dir(root.join("gd")).unwrap();
        std::fs::write(root.join(".git"), "gitdir: gd\n").unwrap();
        let repo = Repository::of(&root).unwrap();
        assert_eq!(repo.git_dir, root.join("gd"));
        assert!(!repo.is_plain(&root));
    }

    #[test]
    fn a_commondir_leading_into_the_project_is_not_plain() {
        let (_d, root) = dir();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("evil")).unwrap();
        std::fs::write(root.join(".git/commondir"), "../evil\n").unwrap();
        let repo = Repository::of(&root).unwrap();
        assert_eq!(repo.common_dir, root.join("evil"));
        assert!(!repo.is_plain(&root));
        assert_eq!(
            repo.folders(),
            vec![root.join(".git").as_path(), root.join("evil").as_path()]
        );
    }

    #[test]
    fn a_linked_worktree_leads_outside_and_is_not_plain() {
        let (_d, base) = dir();
        let main = base.join("main/.git");
        std::fs::create_dir_all(main.join("worktrees/wt")).unwrap();
        std::fs::write(main.join("worktrees/wt/commondir"), "../..\n").unwrap();
        let root = base.join("wt");
        std::fs::create_dir(&root).unwrap();
        let gitdir = format!("gitdir: {}\n", main.join("worktrees/wt").display());
        std::fs::write(root.join(".git"), gitdir).unwrap();
        let repo = Repository::of(&root).unwrap();
        assert_eq!(repo.git_dir, main.join("worktrees/wt"));
        assert_eq!(repo.common_dir, main);
        assert!(!repo.is_plain(&root));
        assert_eq!(repo.folders(), vec![main.as_path()]);
    }

    #[test]
    fn no_repository_is_none() {
        let (_d, root) = dir();
        assert_eq!(Repository::of(&root), None);
    }
}
