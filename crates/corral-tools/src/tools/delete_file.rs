//! `delete_file`: remove one file (or symlink), never a folder.

use crate::display::ResultView;
use crate::error::Result;
use crate::fs::{self, DeleteFileInput, DeleteFileOutput};
use crate::policy::Risk;
use crate::root::ProjectRoot;
use crate::tool::{CallContext, Preview, Tool};
use serde_json::{json, Value};

pub struct DeleteFile;

impl Tool for DeleteFile {
    type Input = DeleteFileInput;
    type Output = DeleteFileOutput;
    const NAME: &'static str = "delete_file";
    const RISK: Risk = Risk::Write;
    const DESCRIPTION: &'static str = "Delete one file (not a folder) in the project.";
    const RESULT: ResultView = ResultView::Deleted;

    fn paths(&self, input: &DeleteFileInput) -> Vec<String> {
        vec![input.path.clone()]
    }

    fn validate(&self, root: &ProjectRoot, input: &DeleteFileInput) -> Result<()> {
        fs::refuse_delete(root, input).map(drop)
    }

    fn preview(&self, root: &ProjectRoot, input: &DeleteFileInput) -> Result<Option<Preview>> {
        fs::preview_delete(root, input).map(Some)
    }

    fn run(
        &self,
        root: &ProjectRoot,
        input: DeleteFileInput,
        ctx: &CallContext,
    ) -> Result<DeleteFileOutput> {
        fs::delete_file_over(root, &input, ctx.base.as_deref())
    }

    fn probe(&self, path: &str) -> Value {
        json!({"path": path})
    }
}
