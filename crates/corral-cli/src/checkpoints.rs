//! `corral-cli checkpoint list|diff ID|restore ID [--path P]|undo-call ID
//! [--dry-run]|verify --root DIR [--store DIR]`. What the store warns of
//! goes to stderr. (The window's checkpoint panel's commands are the
//! host's, `corral_host`, which every host serves.)

use clap::Subcommand;
use corral_tools::checkpoint::{self, Store};
use corral_tools::{Error, ProjectRoot};
use serde_json::Value;
use std::path::{Path, PathBuf};

#[derive(Subcommand)]
pub enum Action {
    /// Print the checkpoints, oldest first.
    List {
        #[command(flatten)]
        at: StoreArgs,
    },
    /// Print what restoring checkpoint ID would change (the project as it
    /// is against the checkpoint), with unified diffs.
    Diff {
        id: String,
        /// Only this file or folder.
        #[arg(long)]
        path: Option<String>,
        #[command(flatten)]
        at: StoreArgs,
    },
    /// Put the project (or one path) back the way checkpoint ID has it; a
    /// checkpoint is taken first (`undo` in the result) so it can be undone.
    Restore {
        id: String,
        /// Only this file or folder.
        #[arg(long)]
        path: Option<String>,
        #[command(flatten)]
        at: StoreArgs,
    },
    /// Undo the one call checkpoint ID was taken before: the paths that
    /// changed from ID to the next checkpoint (or to now, when none was
    /// taken since) are put back as ID has them, and nothing else. A
    /// checkpoint is taken first (`undo` in the result).
    UndoCall {
        id: String,
        /// Only print what it would do, and which of those paths changed
        /// again after the call (`changed_later`: the undo loses that too).
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        at: StoreArgs,
    },
    /// Read and hash every object of every checkpoint: print the
    /// checkpoints that are whole, or fail naming each damaged object and
    /// the checkpoints that need it.
    Verify {
        #[command(flatten)]
        at: StoreArgs,
    },
}

#[derive(clap::Args)]
pub struct StoreArgs {
    /// The project folder; `ssh://…` or `host:/path`: the command runs
    /// there, where that project's checkpoints are.
    #[arg(long)]
    root: PathBuf,
    /// The data folder that holds the checkpoints (default: the user's,
    /// shared with the app).
    #[arg(long, value_name = "DIR")]
    store: Option<PathBuf>,
}

impl Action {
    /// The project folder the command is for.
    pub fn root(&self) -> &Path {
        match self {
            Action::List { at }
            | Action::Diff { at, .. }
            | Action::Restore { at, .. }
            | Action::UndoCall { at, .. }
            | Action::Verify { at } => &at.root,
        }
    }
}

pub fn run(action: Action) -> Result<Value, Error> {
    let open = |at: &StoreArgs| -> Result<(ProjectRoot, Store), Error> {
        let root = ProjectRoot::open(&at.root)?;
        let store = open_store(at.store.as_deref(), &root)?;
        Ok((root, store))
    };
    let (root, store) = match &action {
        Action::List { at }
        | Action::Diff { at, .. }
        | Action::Restore { at, .. }
        | Action::UndoCall { at, .. }
        | Action::Verify { at } => open(at)?,
    };
    let done = act(&root, &store, action);
    say_warnings(&store);
    done
}

fn act(root: &ProjectRoot, store: &Store, action: Action) -> Result<Value, Error> {
    let value = match action {
        Action::List { .. } => serde_json::to_value(store.list(root)?),
        Action::Verify { .. } => serde_json::to_value(store.verify(root)?),
        Action::Diff { id, path, .. } => {
            serde_json::to_value(store.diff(root, &id, path.as_deref())?)
        }
        Action::Restore { id, path, .. } => {
            serde_json::to_value(store.restore(root, &id, path.as_deref())?)
        }
        Action::UndoCall { id, dry_run, .. } => {
            if dry_run {
                serde_json::to_value(store.call_undo_diff(root, &id)?)
            } else {
                serde_json::to_value(store.undo_call(root, &id)?)
            }
        }
    };
    value.map_err(|e| Error::invalid_input(format!("could not encode the result: {e}")))
}

/// Says on stderr what the store warned of (a journal set aside): stdout
/// is the result's.
pub fn say_warnings(store: &Store) {
    for warning in store.take_warnings() {
        eprintln!("corral-cli: warning: {warning}");
    }
}

fn open_store(base: Option<&Path>, root: &ProjectRoot) -> Result<Store, Error> {
    let base = match base {
        Some(base) => base.to_path_buf(),
        None => checkpoint::default_data_dir().ok_or_else(|| {
            Error::invalid_input(
                "there is no data folder for the checkpoints (no $XDG_DATA_HOME or $HOME)",
            )
            .hint("Pass --store DIR, or --no-checkpoint.")
        })?,
    };
    Store::for_project(&base, root)
}
