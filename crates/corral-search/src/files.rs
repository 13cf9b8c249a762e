//! `glob`: matching files, newest first.

use super::walk::{self, PathGlob, Start};
use super::{GlobInput, GlobOutput, MAX_GLOB_FILES};
use corral_fs::error::{Error, ErrorCode, Result};
use corral_fs::root::{ProjectRoot, RelPath};
use ignore::WalkState;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::SystemTime;

pub(super) fn glob(root: &ProjectRoot, input: &GlobInput) -> Result<GlobOutput> {
    let start = walk::start(root, input.path.as_deref())?;
    let is_dir = root
        .dir()
        .metadata(start.rel.as_path())
        .map_err(|e| Error::from_io(&e, &start.rel.display()))?
        .is_dir();
    if !is_dir {
        let shown = start.rel.display();
        return Err(Error::new(
            ErrorCode::NotADirectory,
            format!("`{shown}` is a file, not a folder"),
        )
        .hint("Give the folder to search under as path.")
        .detail("path", shown));
    }
    let pattern = PathGlob::new(&input.pattern, &start.rel, "pattern")?;
    let Some(base) = walk_base(root, &start, &pattern) else {
        return Ok(GlobOutput {
            files: Vec::new(),
            count: 0,
            truncated: false,
        });
    };

    let found: Mutex<Vec<(SystemTime, String)>> = Mutex::new(Vec::new());
    walk::walker(&base).build_parallel().run(|| {
        // Each thread gathers its own list and hands it in when it ends.
        let mut local = Gathered {
            into: &found,
            files: Vec::new(),
        };
        let (start, pattern) = (&start, &pattern);
        Box::new(move |entry| {
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            let Some(rel) = walk::relative(root, entry.path()) else {
                return WalkState::Continue;
            };
            let under_start = entry.path().strip_prefix(&start.abs).unwrap_or(rel);
            if pattern.is_match(under_start, entry.file_name()) {
                let modified = entry
                    .metadata()
                    .ok()
                    .and_then(|m| m.modified().ok())
                    .unwrap_or(SystemTime::UNIX_EPOCH);
                local.files.push((modified, walk::display(rel)));
            }
            WalkState::Continue
        })
    });

    let mut files = found
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    files.sort_unstable_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let truncated = files.len() > MAX_GLOB_FILES;
    let files: Vec<String> = files
        .into_iter()
        .take(MAX_GLOB_FILES)
        .map(|(_, path)| path)
        .collect();
    Ok(GlobOutput {
        count: files.len(),
        files,
        truncated,
    })
}

/// Where to walk from: the start, or deeper when the pattern names folders
/// literally. `None` when those folders do not exist (nothing can match).
fn walk_base(root: &ProjectRoot, start: &Start, pattern: &PathGlob) -> Option<PathBuf> {
    let folders = pattern.literal_folders();
    if folders.is_empty() {
        return Some(start.abs.clone());
    }
    let mut rel: RelPath = start.rel.clone();
    for folder in folders {
        rel = rel.join(std::ffi::OsStr::new(folder));
    }
    match root.canonical(&rel) {
        // `.git/` is skipped, also when a pattern names it.
        Ok(real) if real.is_git_internal() => None,
        // Only a plain folder: through a symlink the walk from the start
        // would not go either.
        Ok(real) if real == rel && root.dir().metadata(rel.as_path()).is_ok_and(|m| m.is_dir()) => {
            Some(walk::absolute(root, &rel))
        }
        Err(e) if matches!(e.code, ErrorCode::NotFound | ErrorCode::NotADirectory) => None,
        _ => Some(start.abs.clone()),
    }
}

/// A thread's matches, handed in when the walk drops the thread's visitor.
struct Gathered<'a> {
    into: &'a Mutex<Vec<(SystemTime, String)>>,
    files: Vec<(SystemTime, String)>,
}

impl Drop for Gathered<'_> {
    fn drop(&mut self) {
        self.into
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .append(&mut self.files);
    }
}
