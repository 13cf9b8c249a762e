//! `edit_file`: exact string replacement that keeps the file's bytes.

use crate::display::ResultView;
use crate::error::Result;
use crate::fs::{self, EditFileInput, EditFileOutput};
use crate::policy::Risk;
use crate::root::ProjectRoot;
use crate::tool::{CallContext, Preview, Tool};
use serde_json::{json, Value};

pub struct EditFile;

impl Tool for EditFile {
    type Input = EditFileInput;
    type Output = EditFileOutput;
    const NAME: &'static str = "edit_file";
    const RISK: Risk = Risk::Write;
    const DESCRIPTION: &'static str = "Replace an exact string in a text file. old_string must \
        match exactly once (copy it from read_file output, including indentation), unless \
        replace_all is true. Line endings, BOM and trailing newline are kept. Returns a unified \
        diff. A miss fails with no_match, several matches with ambiguous_match listing their \
        lines.";
    const RESULT: ResultView = ResultView::Edited;

    fn paths(&self, input: &EditFileInput) -> Vec<String> {
        vec![input.path.clone()]
    }

    fn validate(&self, root: &ProjectRoot, input: &EditFileInput) -> Result<()> {
        fs::refuse_edit(root, input).map(drop)
    }

    fn preview(&self, root: &ProjectRoot, input: &EditFileInput) -> Result<Option<Preview>> {
        fs::preview_edit(root, input).map(Some)
    }

    fn run(
        &self,
        root: &ProjectRoot,
        input: EditFileInput,
        ctx: &CallContext,
    ) -> Result<EditFileOutput> {
        fs::edit_file_over(root, &input, ctx.base.as_deref())
    }

    fn probe(&self, path: &str) -> Value {
        json!({"path": path, "old_string": "secret", "new_string": "pwned"})
    }
}
