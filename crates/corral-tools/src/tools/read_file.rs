//! `read_file`: a text file's lines, in windows for large files.

use crate::display::ResultView;
use crate::error::Result;
use crate::fs::{self, ReadFileInput, ReadFileOutput};
use crate::policy::Risk;
use crate::root::ProjectRoot;
use crate::tool::{CallContext, Tool};
use serde_json::{json, Value};

pub struct ReadFile;

impl Tool for ReadFile {
    type Input = ReadFileInput;
    type Output = ReadFileOutput;
    const NAME: &'static str = "read_file";
    const RISK: Risk = Risk::Read;
    const DESCRIPTION: &'static str = "Read a UTF-8 text file in the project. Returns the lines \
        with their original line endings. Large files come in windows of at most 2000 lines or \
        256 KiB: when `truncated` is true, call again with the start_line the hint names. Binary \
        files fail with not_text. Read a file before editing it.";
    const RESULT: ResultView = ResultView::FileContent;

    fn paths(&self, input: &ReadFileInput) -> Vec<String> {
        vec![input.path.clone()]
    }

    fn run(
        &self,
        root: &ProjectRoot,
        input: ReadFileInput,
        _: &CallContext,
    ) -> Result<ReadFileOutput> {
        fs::read_file(root, &input)
    }

    fn probe(&self, path: &str) -> Value {
        json!({"path": path})
    }
}
