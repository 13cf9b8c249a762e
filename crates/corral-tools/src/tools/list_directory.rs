//! `list_directory`: a folder's entries, a few levels deep.

use crate::display::{ResultView, Subject};
use crate::error::Result;
use crate::fs::{self, ListDirectoryInput, ListDirectoryOutput};
use crate::policy::Risk;
use crate::root::ProjectRoot;
use crate::tool::{CallContext, Tool};
use serde_json::{json, Value};

pub struct ListDirectory;

impl Tool for ListDirectory {
    type Input = ListDirectoryInput;
    type Output = ListDirectoryOutput;
    const NAME: &'static str = "list_directory";
    const RISK: Risk = Risk::Read;
    const DESCRIPTION: &'static str = "List a folder's entries (files, folders, symlinks with \
        sizes), depth 1 to 5. Skips .git/; lists node_modules/ and target/ without descending.";
    const SUBJECT: Subject = Subject::Folder;
    const RESULT: ResultView = ResultView::Entries;

    fn paths(&self, input: &ListDirectoryInput) -> Vec<String> {
        input.path.iter().cloned().collect()
    }

    fn run(
        &self,
        root: &ProjectRoot,
        input: ListDirectoryInput,
        ctx: &CallContext,
    ) -> Result<ListDirectoryOutput> {
        // What a walk finds beneath a blocked path is left out.
        let mut out = fs::list_directory(root, &input)?;
        out.entries.retain(|e| !ctx.boundaries.blocks(&e.path));
        Ok(out)
    }

    fn probe(&self, path: &str) -> Value {
        json!({"path": path})
    }
}
