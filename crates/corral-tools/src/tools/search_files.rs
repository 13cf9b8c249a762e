//! `search_files`: file contents matching a regex, like ripgrep.

use crate::display::{ResultView, Subject};
use crate::error::Result;
use crate::policy::Risk;
use crate::root::ProjectRoot;
use crate::search::{self, SearchFilesInput, SearchFilesOutput};
use crate::tool::{CallContext, Tool};
use serde_json::{json, Value};

pub struct SearchFiles;

impl Tool for SearchFiles {
    type Input = SearchFilesInput;
    type Output = SearchFilesOutput;
    const NAME: &'static str = "search_files";
    const RISK: Risk = Risk::Read;
    const DESCRIPTION: &'static str = "Search file contents with a regular expression (or a \
        literal string with regex=false), like ripgrep. Respects .gitignore, skips binary and \
        hidden files, and files that look like secrets (read those with read_file, which asks the \
        user). Returns matches as {path, line, column, text}; narrow with glob or path.";
    const SUBJECT: Subject = Subject::Query;
    const RESULT: ResultView = ResultView::Matches;

    fn paths(&self, input: &SearchFilesInput) -> Vec<String> {
        input.path.iter().cloned().collect()
    }

    fn run(
        &self,
        root: &ProjectRoot,
        input: SearchFilesInput,
        ctx: &CallContext,
    ) -> Result<SearchFilesOutput> {
        // What a walk finds beneath a blocked path is left out.
        let mut out = match &ctx.search_index {
            Some(index) => search::search_files_indexed(root, &input, index)?,
            None => search::search_files(root, &input)?,
        };
        out.matches.retain(|m| !ctx.boundaries.blocks(&m.path));
        Ok(out)
    }

    fn probe(&self, path: &str) -> Value {
        json!({"query": "secret", "path": path})
    }
}
