//! The project walk: which entries of the project a part of Corral looks
//! at, built in one place for every part.
//!
//! What every walk shares: it starts at a folder of the project, follows
//! no symlink (a link is listed, never entered, so a walk cannot leave the
//! root through one), and never enters git's own `.git`. What differs is
//! named by its [`Use`], each with the reason it differs:
//!
//! | use          | ignore files | hidden | `.git`            | also skipped               |
//! |--------------|--------------|--------|-------------------|----------------------------|
//! | [`Search`]   | all          | no     | left out          |                            |
//! | [`Snapshot`] | all          | kept   | left out, any case|                            |
//! | [`Watch`]    | of the tree  | kept   | folder left out   | `node_modules/`, `target/` |
//! | [`Mask`]     | none         | kept   | listed, not entered | `node_modules/`, `target/` |
//! | [`Links`]    | none         | kept   | left out          |                            |
//!
//! "All" ignore files are ripgrep's: `.gitignore` (nested, negated, also
//! outside a git repository), `.ignore`, `.git/info/exclude`, the user's
//! global git excludes, and those of the folders above the start. A caller
//! narrows a walk further with [`ProjectWalk::keeping`]; it cannot widen it.
//!
//! [`Search`]: Use::Search
//! [`Snapshot`]: Use::Snapshot
//! [`Watch`]: Use::Watch
//! [`Mask`]: Use::Mask
//! [`Links`]: Use::Links
//!
//! ```
//! use corral_fs::walk::{ProjectWalk, Use};
//!
//! let dir = tempfile::tempdir()?;
//! std::fs::write(dir.path().join(".gitignore"), "out/\n")?;
//! std::fs::create_dir(dir.path().join("out"))?;
//! std::fs::write(dir.path().join("out/built.txt"), "")?;
//! std::fs::write(dir.path().join("main.rs"), "")?;
//! let names = |walk: ProjectWalk| -> Vec<String> {
//!     let mut names: Vec<String> = walk
//!         .build()
//!         .flatten()
//!         .filter(|e| e.depth() > 0)
//!         .map(|e| e.file_name().to_string_lossy().into_owned())
//!         .collect();
//!     names.sort();
//!     names
//! };
//! // A search skips what git ignores, and hidden files.
//! assert_eq!(names(ProjectWalk::new(dir.path(), Use::Search)), ["main.rs"]);
//! // The sandbox's masks look at everything.
//! assert_eq!(
//!     names(ProjectWalk::new(dir.path(), Use::Mask)),
//!     [".gitignore", "built.txt", "main.rs", "out"]
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use ignore::{DirEntry, Walk, WalkBuilder, WalkParallel};
use std::ffi::OsStr;
use std::path::Path;

/// Folders the tree's watch and the sandbox's masks never enter: installed
/// packages and build output, large, rewritten by tools, and holding
/// nothing of the user's (the tree still lists them, without insides).
pub const BULK_FOLDERS: [&str; 2] = ["node_modules", "target"];

/// Most entries the sandbox's walks look at ([`Use::Mask`], [`Use::Links`]):
/// past it a walk says it did not see everything.
pub const MAX_MASK_ENTRIES: usize = 200_000;

/// What a walk is for, and so which of the project's entries it sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    /// `search_files`, `glob` and the search index: what ripgrep would
    /// search. Ignored and hidden entries are left out: they are rarely
    /// what the model looks for, and would flood its results.
    Search,
    /// A checkpoint's scan: the ignore files as for a search, but hidden
    /// files kept (`.env`, `.eslintrc` are the project's too, and a restore
    /// must bring them back). `.git` is left out in any case (`.GIT` on a
    /// case-insensitive disk is the same folder): a restore never touches
    /// the repository.
    Snapshot,
    /// The file tree's watch: the folders the tree shows changing. Hidden
    /// folders are kept (the tree shows them); the ignore files read are
    /// the tree's own (`.gitignore`, `.ignore`, `.git/info/exclude` of the
    /// folders walked, not the global excludes nor those above the root),
    /// and the [`BULK_FOLDERS`] are never entered: each folder watched
    /// costs an inotify watch, a per-user limit.
    Watch,
    /// The sandbox's masks and held files: secret-like files to hide and
    /// hard links into git's folders. Nothing is left out for being
    /// ignored or hidden (`.env` is usually both); a nested `.git` is
    /// listed, as a whole, but not entered; the [`BULK_FOLDERS`] are not
    /// entered (they hold no secret or clone of the user's, and would cost
    /// every command a long walk).
    Mask,
    /// The other names of a file (its hard links), looked for when the
    /// policy judges a file with more than one: nothing ignored or hidden
    /// is left out and the [`BULK_FOLDERS`] are entered too, since a
    /// secret's other name may be anywhere. `.git` is left out.
    Links,
}

impl Use {
    /// Whether the walk lists `entry` (and enters it, for a folder).
    /// The start of a walk is always listed.
    fn keeps(self, entry: &DirEntry) -> bool {
        let name = entry.file_name();
        match self {
            Use::Search | Use::Links => name != ".git",
            Use::Snapshot => !name.eq_ignore_ascii_case(".git"),
            Use::Watch => {
                let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
                !(is_dir && (name == ".git" || is_bulk(name)))
            }
            Use::Mask => !(is_in_git(entry.path()) || is_bulk(name)),
        }
    }

    fn rules(self, builder: &mut WalkBuilder) {
        match self {
            Use::Search => {
                builder.standard_filters(true).require_git(false);
            }
            Use::Snapshot => {
                builder
                    .standard_filters(true)
                    .hidden(false)
                    .require_git(false);
            }
            Use::Watch => {
                builder
                    .hidden(false)
                    .parents(false)
                    .git_global(false)
                    .require_git(false);
            }
            Use::Mask | Use::Links => {
                builder.standard_filters(false);
            }
        }
    }
}

/// Whether a name is one of the [`BULK_FOLDERS`].
pub fn is_bulk(name: &OsStr) -> bool {
    BULK_FOLDERS.iter().any(|bulk| name == *bulk)
}

/// Whether `path` is directly inside a folder named `.git`.
fn is_in_git(path: &Path) -> bool {
    path.parent().is_some_and(|p| p.ends_with(".git"))
}

/// A walk of the project (or of a folder of it) for one [`Use`].
pub struct ProjectWalk {
    builder: WalkBuilder,
    use_: Use,
}

impl ProjectWalk {
    /// A walk from `start` (a real folder or file of the project, by its
    /// absolute path) for `use_`.
    pub fn new(start: &Path, use_: Use) -> ProjectWalk {
        let mut builder = WalkBuilder::new(start);
        use_.rules(&mut builder);
        // Never through a link: the walk cannot leave the root by one.
        builder.follow_links(false);
        builder.filter_entry(move |entry| use_.keeps(entry));
        ProjectWalk { builder, use_ }
    }

    /// The same walk, also leaving out (and not entering) every entry
    /// `keep` refuses.
    pub fn keeping(mut self, keep: impl Fn(&DirEntry) -> bool + Send + Sync + 'static) -> Self {
        let use_ = self.use_;
        self.builder
            .filter_entry(move |entry| use_.keeps(entry) && keep(entry));
        self
    }

    /// The walk on this thread, entries in order.
    pub fn build(&self) -> Walk {
        self.builder.build()
    }

    /// The walk on several threads.
    pub fn build_parallel(&self) -> WalkParallel {
        self.builder.build_parallel()
    }
}
