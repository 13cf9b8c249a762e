//! `glob`: files whose path matches a pattern, newest first.

use crate::display::{ResultView, Subject};
use crate::error::Result;
use crate::policy::Risk;
use crate::root::ProjectRoot;
use crate::search::{self, GlobInput, GlobOutput};
use crate::tool::{CallContext, Tool};
use serde_json::{json, Value};

pub struct Glob;

impl Tool for Glob {
    type Input = GlobInput;
    type Output = GlobOutput;
    const NAME: &'static str = "glob";
    const RISK: Risk = Risk::Read;
    const DESCRIPTION: &'static str = "Find files whose path matches a glob pattern such as \
        `src/**/*.rs`, or `*.md` (a pattern without `/` matches file names at any depth), newest \
        first, at most 500. Respects .gitignore, skips hidden files unless the pattern names them.";
    const SUBJECT: Subject = Subject::Pattern;
    const RESULT: ResultView = ResultView::Files;

    fn paths(&self, input: &GlobInput) -> Vec<String> {
        input.path.iter().cloned().collect()
    }

    fn run(&self, root: &ProjectRoot, input: GlobInput, ctx: &CallContext) -> Result<GlobOutput> {
        // What a walk finds beneath a blocked path is left out.
        let mut out = search::glob(root, &input)?;
        out.files.retain(|f| !ctx.boundaries.blocks(f));
        out.count = out.files.len();
        Ok(out)
    }

    fn probe(&self, path: &str) -> Value {
        json!({"pattern": "*", "path": path})
    }
}
