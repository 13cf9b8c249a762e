//! `write_file`: create or replace a whole file, atomically.

use crate::display::ResultView;
use crate::error::Result;
use crate::fs::{self, WriteFileInput, WriteFileOutput};
use crate::policy::Risk;
use crate::root::ProjectRoot;
use crate::tool::{CallContext, Preview, Tool};
use serde_json::{json, Value};

pub struct WriteFile;

impl Tool for WriteFile {
    type Input = WriteFileInput;
    type Output = WriteFileOutput;
    const NAME: &'static str = "write_file";
    const RISK: Risk = Risk::Write;
    const DESCRIPTION: &'static str = "Create a file or replace its whole content, atomically. \
        Missing parent folders are created. Prefer edit_file for changes to an existing file. \
        Paths are relative to the project root; files under .git/ cannot be written.";
    const RESULT: ResultView = ResultView::Written;

    fn paths(&self, input: &WriteFileInput) -> Vec<String> {
        vec![input.path.clone()]
    }

    fn validate(&self, root: &ProjectRoot, input: &WriteFileInput) -> Result<()> {
        fs::refuse_write(root, input).map(drop)
    }

    fn preview(&self, root: &ProjectRoot, input: &WriteFileInput) -> Result<Option<Preview>> {
        fs::preview_write(root, input).map(Some)
    }

    fn run(
        &self,
        root: &ProjectRoot,
        input: WriteFileInput,
        ctx: &CallContext,
    ) -> Result<WriteFileOutput> {
        fs::write_file_over(root, &input, ctx.base.as_deref())
    }

    fn probe(&self, path: &str) -> Value {
        json!({"path": path, "content": "pwned"})
    }
}
