//! The checkpoint panel's commands over an open session's store: list,
//! show what a restore would change, restore, undo one call. A remote
//! project's are answered where it is (its checkpoints live there).

use crate::wire::{parse, to_value};
use corral_session::Session;
use corral_tools::checkpoint::Store;
use corral_tools::{Error, ErrorCode, ProjectRoot};
use serde::Deserialize;
use serde_json::Value;

/// Answers one of the checkpoint commands (the table's section
/// "Checkpoints") with `session`'s store, off the async
/// runtime (a restore writes the project).
pub async fn invoke(session: &Session, command: &str, args: Value) -> Result<Value, Error> {
    let root = session.root().clone();
    let store = session
        .checkpoint_store()
        .ok_or_else(|| Error::new(ErrorCode::Io, "this project keeps no checkpoints"))??;
    let command = command.to_string();
    tokio::task::spawn_blocking(move || act_on(&root, &store, &command, args))
        .await
        .map_err(|e| Error::new(ErrorCode::Io, format!("the checkpoint store stopped: {e}")))?
}

/// A checkpoint, and the one path a command is limited to.
#[derive(Deserialize)]
struct IdArgs {
    id: String,
    path: Option<String>,
}

#[derive(Deserialize)]
struct CompareArgs {
    from: String,
    to: Option<String>,
}

fn act_on(root: &ProjectRoot, store: &Store, command: &str, args: Value) -> Result<Value, Error> {
    let id = |args: Value| parse::<IdArgs>(command, args);
    match command {
        "list_checkpoints" => to_value(store.list(root)?),
        "checkpoint_diff" => {
            let a = id(args)?;
            to_value(store.diff(root, &a.id, a.path.as_deref())?)
        }
        "compare_checkpoints" => {
            let a: CompareArgs = parse(command, args)?;
            to_value(store.compare(root, &a.from, a.to.as_deref())?)
        }
        "restore_checkpoint" => {
            let a = id(args)?;
            to_value(store.restore(root, &a.id, a.path.as_deref())?)
        }
        "call_undo_diff" => to_value(store.call_undo_diff(root, &id(args)?.id)?),
        "undo_call" => to_value(store.undo_call(root, &id(args)?.id)?),
        // Looking at the store first finishes an interrupted restore or
        // sets its journal aside; what it warned of is said once.
        "checkpoint_notice" => {
            store.list(root)?;
            let warnings = store.take_warnings();
            to_value((!warnings.is_empty()).then(|| warnings.join("\n")))
        }
        other => Err(Error::new(
            ErrorCode::NotFound,
            format!("`{other}` is not a checkpoint command"),
        )),
    }
}
