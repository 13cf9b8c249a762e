//! `symbols`: what the language server knows of a name or a position: its
//! type and documentation (hover), its definitions and its references.

use crate::error::{Error, ErrorCode, Result};
use crate::lsp;
use crate::policy::Risk;
use crate::root::ProjectRoot;
use crate::tool::{CallContext, Tool};
use corral_lsp::{Source, Symbol};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub struct Symbols;

/// Input of `symbols`.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SymbolsInput {
    /// The file, relative to the project root.
    pub path: String,
    /// The name to look up: its first whole-word occurrence in the file
    /// (on `line`, when given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// 1-based line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub line: Option<u32>,
    /// 1-based column (with `line`, instead of `name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub column: Option<u32>,
}

impl Tool for Symbols {
    type Input = SymbolsInput;
    type Output = Symbol;
    const NAME: &'static str = "symbols";
    const RISK: Risk = Risk::Read;
    const DESCRIPTION: &'static str = "A symbol's type, definitions and references. Give \
        path and name (its first whole-word occurrence, on line if given), or path, line and \
        column. Returns hover (type and docs), definitions and references as {path, line, \
        column}. Works for Rust, TypeScript/JavaScript, Python, Go and C/C++ where their \
        server is installed; fails with language_server otherwise.";

    fn paths(&self, input: &SymbolsInput) -> Vec<String> {
        vec![input.path.clone()]
    }

    fn run(&self, root: &ProjectRoot, input: SymbolsInput, ctx: &CallContext) -> Result<Symbol> {
        let rel = root.resolve(&input.path)?;
        let shown = rel.display();
        let (bytes, _) = crate::fs::read_regular(root, &rel)?;
        let text = corral_fs::text::decode(bytes, &shown)?.body;
        let (line, column) = position(&text, &input)?;
        let servers = ctx.lsp.as_ref().ok_or_else(|| {
            Error::new(
                ErrorCode::LanguageServer,
                "no language servers run in this session",
            )
        })?;
        let source = Source {
            path: shown,
            text: Some(text),
        };
        servers.symbol(&source, line, column, lsp::TOOL_WAIT)
    }

    fn probe(&self, path: &str) -> Value {
        json!({"path": path, "name": "secret"})
    }
}

/// The 1-based line and UTF-16 column the input names.
fn position(text: &str, input: &SymbolsInput) -> Result<(u32, u32)> {
    match (&input.name, input.line, input.column) {
        (_, Some(line), Some(column)) if line >= 1 && column >= 1 => Ok((line, column)),
        (Some(name), line, None) if is_word(name) => {
            let found = text
                .lines()
                .zip(1u32..)
                .filter(|(_, n)| line.is_none_or(|l| l == *n))
                .find_map(|(text, n)| whole_word(text, name).map(|col| (n, col)));
            found.ok_or_else(|| {
                let place = line.map_or(String::new(), |l| format!(" on line {l}"));
                Error::new(
                    ErrorCode::NoMatch,
                    format!(
                        "`{name}` does not occur as a whole word in `{}`{place}",
                        input.path
                    ),
                )
                .hint("Check the name's spelling, or give line and column.")
                .detail("name", name.as_str())
            })
        }
        _ => Err(Error::invalid_input(
            "symbols needs a name (letters, digits, `_`, `$`), or a line and a column (1-based)",
        )
        .hint("Give {path, name} or {path, line, column}.")),
    }
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

fn is_word(name: &str) -> bool {
    !name.is_empty() && name.chars().all(is_ident)
}

/// The 1-based UTF-16 column of `name`'s first whole-word occurrence.
fn whole_word(line: &str, name: &str) -> Option<u32> {
    line.match_indices(name).find_map(|(at, _)| {
        let before = line[..at].chars().next_back();
        let after = line[at + name.len()..].chars().next();
        if before.is_some_and(is_ident) || after.is_some_and(is_ident) {
            return None;
        }
        let units: usize = line[..at].chars().map(char::len_utf16).sum();
        u32::try_from(units + 1).ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(name: Option<&str>, line: Option<u32>, column: Option<u32>) -> SymbolsInput {
        SymbolsInput {
            path: "a.ts".into(),
            name: name.map(str::to_string),
            line,
            column,
        }
    }

    #[test]
    fn a_name_is_found_as_a_whole_word_in_utf16_columns() {
        // `𝒙` is two UTF-16 units, as servers count.
        let text = "const totals = 1;\nconst 𝒙 = total + totals;\n";
        assert_eq!(
            position(text, &input(Some("total"), None, None)).unwrap(),
            (2, 12)
        );
        assert_eq!(
            position(text, &input(Some("totals"), Some(2), None)).unwrap(),
            (2, 20)
        );
        assert_eq!(
            position(text, &input(None, Some(3), Some(4))).unwrap(),
            (3, 4)
        );
        let miss = position(text, &input(Some("tot"), None, None)).unwrap_err();
        assert_eq!(miss.code, ErrorCode::NoMatch);
        let bad = position(text, &input(Some("a b"), None, None)).unwrap_err();
        assert_eq!(bad.code, ErrorCode::InvalidInput);
        let none = position(text, &input(None, Some(1), None)).unwrap_err();
        assert_eq!(none.code, ErrorCode::InvalidInput);
    }
}
