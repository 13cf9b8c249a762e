//! `count_lines`: a tool that exists only to prove that this file and one
//! registry line are all a tool needs. It is compiled in with the
//! `throwaway-tool` feature, which only the CLI's and the app's tests turn
//! on; the released binaries never have it. It also counts how often
//! its input is parsed, per path ([`parses_of`]): the tests hold a call
//! to one parse however many steps it goes through.

use crate::error::Result;
use crate::fs::{self, ReadFileInput};
use crate::policy::Risk;
use crate::root::ProjectRoot;
use crate::tool::{CallContext, Tool};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock, PoisonError};

/// Input of `count_lines`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CountLinesInput {
    /// File path relative to the project root.
    #[serde(deserialize_with = "counted")]
    #[schemars(with = "String")]
    pub path: String,
}

/// How many times an input naming each path was parsed.
fn parses() -> &'static Mutex<HashMap<String, usize>> {
    static PARSES: OnceLock<Mutex<HashMap<String, usize>>> = OnceLock::new();
    PARSES.get_or_init(Mutex::default)
}

/// How many times an input with this `path` was parsed so far.
pub fn parses_of(path: &str) -> usize {
    let parses = parses().lock().unwrap_or_else(PoisonError::into_inner);
    parses.get(path).copied().unwrap_or(0)
}

/// Reads the `path` field and counts the parse.
fn counted<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<String, D::Error> {
    let path = String::deserialize(d)?;
    let mut parses = parses().lock().unwrap_or_else(PoisonError::into_inner);
    *parses.entry(path.clone()).or_default() += 1;
    Ok(path)
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
