//! What the model and the window are shown: errors and warnings per file,
//! bounded, and where a symbol is defined and used.

use serde::{Deserialize, Serialize};

/// At most this many diagnostics in one report (errors first); the rest
/// are counted in [`Report::omitted`].
pub const MAX_DIAGNOSTICS: usize = 40;
/// A diagnostic's message is cut to this many characters.
pub const MAX_MESSAGE_CHARS: usize = 400;
/// At most this many references in one answer.
pub const MAX_REFERENCES: usize = 50;
/// A hover text is cut to this many characters.
pub const MAX_HOVER_CHARS: usize = 2_000;

/// How bad a diagnostic is (hints and information are not reported).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
    ts_rs::TS,
)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    Warning,
}

/// One error or warning of a language server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, ts_rs::TS)]
pub struct Diagnostic {
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in UTF-16 units as servers count (characters, for
    /// ASCII text).
    pub column: u32,
    pub severity: Severity,
    pub message: String,
    /// Who reported it (`ts`, `Pyright`, `rustc`...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub source: Option<String>,
    /// The server's code for it (`2322`, `reportAttributeAccessIssue`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub code: Option<String>,
}

/// The errors and warnings of one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, ts_rs::TS)]
pub struct FileDiagnostics {
    /// The path relative to the project root.
    pub path: String,
    /// How many errors the server reported (also those left out).
    pub errors: u32,
    /// How many warnings the server reported (also those left out).
    pub warnings: u32,
    /// The diagnostics shown, errors first.
    pub diagnostics: Vec<Diagnostic>,
}

/// The diagnostics of some files, and what could not be learned.
#[derive(
    Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, ts_rs::TS,
)]
#[ts(rename = "DiagnosticsReport")]
pub struct Report {
    /// Each file a server answered for, clean ones too.
    pub files: Vec<FileDiagnostics>,
    /// Diagnostics left out to keep the report short.
    #[serde(default, skip_serializing_if = "is_zero")]
    #[ts(as = "Option<u32>", optional)]
    pub omitted: u32,
    /// What is missing and why: a server that is not installed, still
    /// starting past the wait, crashed or did not answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<String>>", optional)]
    pub notes: Vec<String>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Report {
    /// How many errors and warnings all its files have.
    pub fn counts(&self) -> (u32, u32) {
        self.files
            .iter()
            .fold((0, 0), |(e, w), f| (e + f.errors, w + f.warnings))
    }

    /// Keeps the first [`MAX_DIAGNOSTICS`] (errors before warnings, in
    /// file order) and counts the rest.
    pub(crate) fn bound(mut self) -> Report {
        self.files.sort_by(|a, b| a.path.cmp(&b.path));
        let mut left = MAX_DIAGNOSTICS;
        for severity in [Severity::Error, Severity::Warning] {
            for file in &mut self.files {
                let shown = file
                    .diagnostics
                    .iter()
                    .filter(|d| d.severity == severity)
                    .count();
                if shown > left {
                    let mut seen = 0;
                    file.diagnostics.retain(|d| {
                        if d.severity != severity {
                            return true;
                        }
                        seen += 1;
                        seen <= left
                    });
                    self.omitted += u32::try_from(shown - left).unwrap_or(u32::MAX);
                }
                left = left.saturating_sub(shown);
            }
        }
        self
    }
}

/// A place in a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Location {
    /// Relative to the project root; an absolute path for a file outside
    /// it (a library's declarations).
    pub path: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column (UTF-16 units).
    pub column: u32,
}

/// What a server knows of the symbol at a position.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Symbol {
    /// The position asked about.
    pub at: Location,
    /// Its type and documentation, as the server writes them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hover: Option<String>,
    /// Where it is defined.
    pub definitions: Vec<Location>,
    /// Where it is used (with its definition).
    pub references: Vec<Location>,
    /// References left out to keep the answer short.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub references_omitted: u32,
    /// A part the server did not answer, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// `text` cut to `max` characters, with an ellipsis when cut.
pub(crate) fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// A server's diagnostics for one file, as reported: errors and warnings
/// only, in line order.
pub(crate) fn file_diagnostics(path: String, items: &[lsp_types::Diagnostic]) -> FileDiagnostics {
    use lsp_types::{DiagnosticSeverity, NumberOrString};
    let mut diagnostics: Vec<Diagnostic> = items
        .iter()
        .filter_map(|d| {
            // A diagnostic without a severity is the client's to judge: an error.
            let severity = match d.severity {
                None | Some(DiagnosticSeverity::ERROR) => Severity::Error,
                Some(DiagnosticSeverity::WARNING) => Severity::Warning,
                Some(_) => return None,
            };
            Some(Diagnostic {
                line: d.range.start.line.saturating_add(1),
                column: d.range.start.character.saturating_add(1),
                severity,
                message: cut(d.message.trim(), MAX_MESSAGE_CHARS),
                source: d.source.clone(),
                code: d.code.as_ref().map(|code| match code {
                    NumberOrString::Number(n) => n.to_string(),
                    NumberOrString::String(s) => s.clone(),
                }),
            })
        })
        .collect();
    diagnostics.sort_by_key(|d| (d.severity, d.line, d.column));
    let errors = diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    let warnings = diagnostics.len() - errors;
    FileDiagnostics {
        path,
        errors: u32::try_from(errors).unwrap_or(u32::MAX),
        warnings: u32::try_from(warnings).unwrap_or(u32::MAX),
        diagnostics,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn diagnostic(line: u32, severity: Severity) -> Diagnostic {
        Diagnostic {
            line,
            column: 1,
            severity,
            message: "m".into(),
            source: None,
            code: None,
        }
    }

    #[test]
    fn a_long_report_keeps_errors_first_and_counts_the_rest() {
        let warnings = (1..=30).map(|l| diagnostic(l, Severity::Warning));
        let errors = (1..=30).map(|l| diagnostic(100 + l, Severity::Error));
        let file = |path: &str, diagnostics: Vec<Diagnostic>| FileDiagnostics {
            path: path.into(),
            errors: 0,
            warnings: 0,
            diagnostics,
        };
        let report = Report {
            files: vec![
                file("b.ts", errors.collect()),
                file("a.ts", warnings.collect()),
            ],
            ..Report::default()
        }
        .bound();
        assert_eq!(report.omitted, 20);
        let a = &report.files[0];
        let b = &report.files[1];
        assert_eq!((a.path.as_str(), a.diagnostics.len()), ("a.ts", 10));
        assert_eq!((b.path.as_str(), b.diagnostics.len()), ("b.ts", 30));
    }

    #[test]
    fn hints_are_left_out_and_messages_cut() {
        let long = "x".repeat(MAX_MESSAGE_CHARS + 10);
        let lsp = |severity, message: &str| lsp_types::Diagnostic {
            range: lsp_types::Range::new(
                lsp_types::Position::new(2, 4),
                lsp_types::Position::new(2, 5),
            ),
            severity,
            message: message.into(),
            code: Some(lsp_types::NumberOrString::Number(2322)),
            ..lsp_types::Diagnostic::default()
        };
        use lsp_types::DiagnosticSeverity as S;
        let file = file_diagnostics(
            "a.ts".into(),
            &[
                lsp(Some(S::HINT), "unused"),
                lsp(Some(S::WARNING), "careful"),
                lsp(None, &long),
            ],
        );
        assert_eq!((file.errors, file.warnings), (1, 1));
        assert_eq!(file.diagnostics[0].line, 3);
        assert_eq!(file.diagnostics[0].column, 5);
        assert_eq!(file.diagnostics[0].code.as_deref(), Some("2322"));
        assert_eq!(
            file.diagnostics[0].message.chars().count(),
            MAX_MESSAGE_CHARS + 1
        );
        assert_eq!(file.diagnostics[1].message, "careful");
    }
}
