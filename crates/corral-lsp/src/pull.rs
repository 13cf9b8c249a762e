//! Asking a server for a document's diagnostics instead of waiting for it
//! to publish them.
//!
//! A server that publishes only when a file's diagnostics change
//! (typescript-language-server says nothing when a clean file stays clean)
//! leaves a waiting client nothing to wait for but its cap. A pull is
//! answered for every version, so an edit returns as soon as the server
//! has checked it. Three ways, the first the server offers:
//!
//! - `textDocument/diagnostic` (LSP 3.17), declared in the server's
//!   capabilities or registered after `initialized` (pyright);
//! - typescript-language-server's `typescript.tsserverRequest` command,
//!   which asks tsserver for the file's syntactic and semantic diagnostics
//!   (the ones the server would publish);
//! - none: the caller waits for `textDocument/publishDiagnostics`.

use crate::link::{Link, Missed};
use serde::Deserialize;
use serde_json::{json, Value};
use std::time::Instant;

/// typescript-language-server's command that forwards a request to tsserver.
const TSSERVER_REQUEST: &str = "typescript.tsserverRequest";
const DOCUMENT_DIAGNOSTIC: &str = "textDocument/diagnostic";

/// How a server is asked for a document's diagnostics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pull {
    /// `textDocument/diagnostic`.
    Document,
    /// tsserver's `syntacticDiagnosticsSync` and `semanticDiagnosticsSync`
    /// through typescript-language-server.
    TsServer,
    /// It is not asked: its publications are waited for.
    Push,
}

impl Pull {
    /// The way to ask the server behind `link`. `refused` says it answered
    /// a `textDocument/diagnostic` it did not declare with "no such
    /// method"; until then it is tried (pyright registers it only after
    /// `initialized`, and a first edit may come before that).
    pub(crate) fn of(link: &Link, refused: bool) -> Pull {
        let capabilities = link.capabilities();
        let declared = capabilities
            .get("diagnosticProvider")
            .is_some_and(|p| !p.is_null());
        if declared || link.registered(DOCUMENT_DIAGNOSTIC) {
            return Pull::Document;
        }
        let commands = &capabilities["executeCommandProvider"]["commands"];
        if commands
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c == TSSERVER_REQUEST))
        {
            return Pull::TsServer;
        }
        if refused {
            Pull::Push
        } else {
            Pull::Document
        }
    }
}

/// The diagnostics of the open document `uri`, by `textDocument/diagnostic`.
pub(crate) fn document(
    link: &Link,
    uri: &str,
    deadline: Instant,
) -> Result<Vec<lsp_types::Diagnostic>, Missed> {
    let answer = link.request(
        DOCUMENT_DIAGNOSTIC,
        json!({ "textDocument": { "uri": uri } }),
        deadline,
    )?;
    // No `previousResultId` is sent, so the report is a full one.
    items(&answer["items"]).ok_or_else(|| malformed(DOCUMENT_DIAGNOSTIC, &answer))
}

/// The diagnostics of the open document at `path` (absolute), from
/// tsserver: its syntax errors, then its type errors.
pub(crate) fn tsserver(
    link: &Link,
    path: &str,
    deadline: Instant,
) -> Result<Vec<lsp_types::Diagnostic>, Missed> {
    let mut all = Vec::new();
    for command in ["syntacticDiagnosticsSync", "semanticDiagnosticsSync"] {
        let answer = link.request(
            "workspace/executeCommand",
            json!({ "command": TSSERVER_REQUEST, "arguments": [command, { "file": path }] }),
            deadline,
        )?;
        if answer["success"] == false {
            return Err(Missed::Refused {
                code: 0,
                message: format!(
                    "tsserver refused {command}: {}",
                    answer["message"].as_str().unwrap_or("no reason given")
                ),
            });
        }
        let found = from_tsserver(&answer["body"]).ok_or_else(|| malformed(command, &answer))?;
        all.extend(found);
    }
    Ok(all)
}

fn items(value: &Value) -> Option<Vec<lsp_types::Diagnostic>> {
    serde_json::from_value(value.clone()).ok()
}

fn malformed(method: &str, answer: &Value) -> Missed {
    let shown = crate::report::cut(&answer.to_string(), 200);
    Missed::Refused {
        code: 0,
        message: format!("the answer to {method} was not a diagnostics report: {shown}"),
    }
}

/// A tsserver position: 1-based line and offset (UTF-16 units).
#[derive(Deserialize)]
struct TsPosition {
    line: u32,
    offset: u32,
}

/// A diagnostic as tsserver gives it (its protocol's `Diagnostic`).
#[derive(Deserialize)]
struct TsDiagnostic {
    start: TsPosition,
    end: TsPosition,
    text: String,
    #[serde(default)]
    code: Option<i32>,
    category: String,
    #[serde(default)]
    source: Option<String>,
}

/// tsserver's diagnostics as the protocol's, as typescript-language-server
/// converts them for its own publications.
fn from_tsserver(body: &Value) -> Option<Vec<lsp_types::Diagnostic>> {
    use lsp_types::{DiagnosticSeverity, NumberOrString, Position, Range};
    let found: Vec<TsDiagnostic> = serde_json::from_value(body.clone()).ok()?;
    let position = |p: &TsPosition| Position {
        line: p.line.saturating_sub(1),
        character: p.offset.saturating_sub(1),
    };
    Some(
        found
            .into_iter()
            .map(|d| lsp_types::Diagnostic {
                range: Range {
                    start: position(&d.start),
                    end: position(&d.end),
                },
                severity: Some(match d.category.as_str() {
                    "warning" => DiagnosticSeverity::WARNING,
                    "suggestion" => DiagnosticSeverity::HINT,
                    "message" => DiagnosticSeverity::INFORMATION,
                    _ => DiagnosticSeverity::ERROR,
                }),
                code: d.code.map(NumberOrString::Number),
                source: Some(d.source.unwrap_or_else(|| "typescript".into())),
                message: d.text,
                ..lsp_types::Diagnostic::default()
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn tsserver_diagnostics_become_the_protocol_s() {
        let body = json!([
            { "start": { "line": 3, "offset": 7 }, "end": { "line": 3, "offset": 8 },
              "text": "Type 'number' is not assignable to type 'string'.", "code": 2322, "category": "error" },
            { "start": { "line": 1, "offset": 1 }, "end": { "line": 1, "offset": 4 },
              "text": "unused", "code": 6133, "category": "suggestion", "reportsUnnecessary": {} },
        ]);
        let found = from_tsserver(&body).unwrap();
        let shown = crate::report::file_diagnostics("a.ts".into(), &found);
        assert_eq!(
            serde_json::to_value(shown).unwrap(),
            json!({ "path": "a.ts", "errors": 1, "warnings": 0, "diagnostics": [{
                "line": 3, "column": 7, "severity": "error",
                "message": "Type 'number' is not assignable to type 'string'.",
                "source": "typescript", "code": "2322",
            }]})
        );
        assert_eq!(from_tsserver(&json!({ "not": "a list" })), None);
    }
}
