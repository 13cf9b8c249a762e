//! `diagnostics`: the errors and warnings the project's language servers
//! report for a file, a folder or the whole project.

use crate::display::ResultView;
use crate::error::Result;
use crate::lsp::{self, Report};
use crate::policy::Risk;
use crate::root::ProjectRoot;
use crate::tool::{CallContext, Tool};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub struct Diagnostics;

/// Input of `diagnostics`.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiagnosticsInput {
    /// A file or folder relative to the project root; the whole project
    /// when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

impl Tool for Diagnostics {
    type Input = DiagnosticsInput;
    type Output = Report;
    const NAME: &'static str = "diagnostics";
    const RISK: Risk = Risk::Read;
    const RESULT: ResultView = ResultView::Diagnostics;
    const DESCRIPTION: &'static str = "Language servers' errors and warnings for a path or the \
        project. The servers are rust-analyzer, typescript-language-server, pyright, gopls and \
        clangd, where installed; without path, the 60 newest source files are checked. Returns \
        {files: [{path, errors, warnings, diagnostics: [{line, column, severity, message, \
        source, code}]}], notes}; notes say which server is missing, still starting or \
        stopped. write_file and edit_file already return their files' diagnostics.";

    fn paths(&self, input: &DiagnosticsInput) -> Vec<String> {
        input.path.iter().cloned().collect()
    }

    fn run(
        &self,
        root: &ProjectRoot,
        input: DiagnosticsInput,
        ctx: &CallContext,
    ) -> Result<Report> {
        // The path is checked as read_file and list_directory check theirs,
        // with or without servers.
        let file = match &input.path {
            Some(path) => Some(is_file(root, path)?),
            None => None,
        };
        let Some(servers) = &ctx.lsp else {
            return Ok(Report {
                notes: vec!["no language servers run in this session".into()],
                ..Report::default()
            });
        };
        let (sources, left_out) = match (file, &input.path) {
            (Some(true), Some(path)) => (lsp::source(root, path).into_iter().collect(), 0),
            (_, folder) => lsp::sources_under(root, folder.as_deref(), &servers.languages())?,
        };
        let mut report = servers.check(&sources, lsp::TOOL_WAIT);
        if sources.is_empty() {
            report.notes.push(match &input.path {
                Some(path) => format!("no language server reads `{path}`"),
                None => "the project has no source file a language server here reads".into(),
            });
        }
        if left_out > 0 {
            report.notes.push(format!(
                "{left_out} older source files were not checked; name a file or folder to check them"
            ));
        }
        Ok(report)
    }

    fn probe(&self, path: &str) -> Value {
        json!({"path": path})
    }
}

/// Whether `path` is a file (a folder: false), failing as the file tools
/// do for a path that is outside, missing or not readable.
fn is_file(root: &ProjectRoot, path: &str) -> Result<bool> {
    let rel = root.resolve(path)?;
    match crate::fs::read_regular(root, &rel) {
        Ok(_) => Ok(true),
        Err(e) if e.code == crate::error::ErrorCode::IsDirectory => {
            let folder = crate::fs::ListDirectoryInput {
                path: Some(path.to_string()),
                depth: None,
            };
            crate::fs::list_directory(root, &folder).map(|_| false)
        }
        Err(e) => Err(e),
    }
}
