//! `count_lines`: a tool that exists only to prove that this file and one
//! registry line are all a tool needs. It is compiled in with the
//! `throwaway-tool` feature, which only the CLI's and the app's tests turn
//! on; the released binaries never have it.

use crate::error::Result;
use crate::fs::{self, ReadFileInput};
use crate::policy::Risk;
use crate::root::ProjectRoot;
use crate::tool::{CallContext, Tool};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// Input of `count_lines`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CountLinesInput {
    /// File path relative to the project root.
    pub path: String,
}

/// Output of `count_lines`.
#[derive(Debug, Serialize)]
pub struct CountLinesOutput {
    pub path: String,
    pub lines: usize,
}

pub struct CountLines;

impl Tool for CountLines {
    type Input = CountLinesInput;
    type Output = CountLinesOutput;
    const NAME: &'static str = "count_lines";
    const RISK: Risk = Risk::Read;
    const DESCRIPTION: &'static str = "Count the lines of one text file in the project.";

    fn paths(&self, input: &CountLinesInput) -> Vec<String> {
        vec![input.path.clone()]
    }

    fn run(
        &self,
        root: &ProjectRoot,
        input: CountLinesInput,
        _: &CallContext,
    ) -> Result<CountLinesOutput> {
        let read = fs::read_file(
            root,
            &ReadFileInput {
                path: input.path,
                start_line: Some(1),
                end_line: Some(1),
            },
        )?;
        Ok(CountLinesOutput {
            path: read.path,
            lines: read.total_lines,
        })
    }

    fn probe(&self, path: &str) -> Value {
        json!({"path": path})
    }
}
