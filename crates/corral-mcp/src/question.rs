//! The approval question put to an MCP client's user: the call shown
//! whole, every character that is not visibly drawn marked, or not asked
//! at all.
//!
//! A client draws the question as plain text in a dialog of its own, so
//! whatever the text hides stays hidden: 300 spaces push a payload past the
//! dialog's edge, 6,000 braille blanks or 8,000 object replacement
//! characters push it out of sight, a bidi override reorders what follows,
//! a lone CR makes code look like part of a comment. So each value is
//! shown whole, marked as every host marks what it shows
//! ([`corral_session::marked`], the rule the window's approval draws too).
//! A call too long to show whole in a question is not asked about:
//! [`question`] says why instead.
//!
//! ```
//! use corral_mcp::question::reveal;
//! assert_eq!(reveal("invoice\u{202E}txt.exe"), "invoice⟨U+202E⟩txt.exe");
//! assert_eq!(reveal(&format!("a{}b", "\u{FFFC}".repeat(8000))), "a⟨U+FFFC ×8000⟩b");
//! ```

pub use corral_session::marked::{is_hidden, reveal, BLANK_GLYPHS, LONG_SPACES, MAX_MARKS};
use serde_json::Value;

/// The longest question asked, in characters once marked: a dialog that
/// must scroll or cut a longer one would hide part of what is approved.
pub const MAX_QUESTION_CHARS: usize = 16_000;

/// Why a call was not asked about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooLong {
    /// The question's length once marked, in characters.
    pub chars: usize,
}

/// Every field of a call's `input` on its own line, `key: value`, whole
/// and marked (a string as itself, anything else as JSON).
pub fn fields(input: &Value) -> String {
    let mut text = String::new();
    for (key, value) in input.as_object().into_iter().flatten() {
        let shown = value
            .as_str()
            .map_or_else(|| value.to_string(), str::to_string);
        text.push_str(&format!("{}: {}\n", reveal(key), reveal(&shown)));
    }
    text
}

/// The question for `tool` called with `input` in `root`, asked because
/// of `reason`: every field on its own line, whole and marked. `Err` when
/// it would be longer than [`MAX_QUESTION_CHARS`]: such a call is not
/// asked about, since no dialog shows it whole.
pub fn question(root: &str, reason: &str, tool: &str, input: &Value) -> Result<String, TooLong> {
    let mut text = format!(
        "Corral asks before this call in {} ({}): {}\n",
        reveal(root),
        reveal(reason),
        reveal(tool)
    );
    text.push_str(&fields(input));
    text.push_str("Allow it?");
    let chars = text.chars().count();
    if chars > MAX_QUESTION_CHARS {
        return Err(TooLong { chars });
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use icu_properties::props::GeneralCategory;
    use icu_properties::CodePointMapData;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    /// The table `ui/src/lib/reveal.test.ts` tests the window's markers
    /// with: the two must mark the same characters the same way.
    const CASES: &str = include_str!("../../../ui/src/lib/reveal.cases.json");

    /// A string of the table: itself, or pieces with `[text, count]` for
    /// `text` repeated `count` times.
    fn spell(value: &Value) -> String {
        match value {
            Value::String(text) => text.clone(),
            Value::Array(pieces) => pieces
                .iter()
                .map(|piece| match piece {
                    Value::Array(pair) => pair[0]
                        .as_str()
                        .expect("a repeated piece is a string")
                        .repeat(
                            usize::try_from(pair[1].as_u64().expect("a count")).expect("a count"),
                        ),
                    other => spell(other),
                })
                .collect(),
            other => panic!("not a string of the table: {other}"),
        }
    }

    fn cases() -> Vec<(String, String, String)> {
        let table: Value = serde_json::from_str(CASES).expect("the table is JSON");
        table["cases"]
            .as_array()
            .expect("cases")
            .iter()
            .map(|case| {
                (
                    case["what"].as_str().expect("what").to_string(),
                    spell(&case["text"]),
                    spell(&case["shown"]),
                )
            })
            .collect()
    }

    #[test]
    fn the_window_s_table_is_marked_the_same() {
        let cases = cases();
        assert!(cases.len() > 100, "the table has {} cases", cases.len());
        let wrong: Vec<String> = cases
            .iter()
            .filter(|(_, text, shown)| reveal(text) != *shown)
            .map(|(what, text, shown)| {
                let got = reveal(text);
                if got.chars().count() > 200 {
                    format!("{what}: {} chars shown", got.chars().count())
                } else {
                    format!("{what}: {got:?}, not {shown:?}")
                }
            })
            .collect();
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    #[test]
    fn the_table_covers_every_general_category() {
        let map = CodePointMapData::<GeneralCategory>::new();
        let tested: Vec<GeneralCategory> = cases()
            .iter()
            .flat_map(|(_, text, _)| text.chars().map(|c| map.get(c)).collect::<Vec<_>>())
            .collect();
        // Surrogates cannot be a Rust char: ui/src/lib/reveal.test.ts tests them.
        use GeneralCategory as G;
        for category in [
            G::UppercaseLetter,
            G::LowercaseLetter,
            G::TitlecaseLetter,
            G::ModifierLetter,
            G::OtherLetter,
            G::NonspacingMark,
            G::SpacingMark,
            G::EnclosingMark,
            G::DecimalNumber,
            G::LetterNumber,
            G::OtherNumber,
            G::ConnectorPunctuation,
            G::DashPunctuation,
            G::OpenPunctuation,
            G::ClosePunctuation,
            G::InitialPunctuation,
            G::FinalPunctuation,
            G::OtherPunctuation,
            G::MathSymbol,
            G::CurrencySymbol,
            G::ModifierSymbol,
            G::OtherSymbol,
            G::SpaceSeparator,
            G::LineSeparator,
            G::ParagraphSeparator,
            G::Control,
            G::Format,
            G::PrivateUse,
            G::Unassigned,
        ] {
            assert!(tested.contains(&category), "{category:?}");
        }
    }

    #[test]
    fn blank_glyphs_and_unassigned_code_points_are_marked() {
        for c in [
            '\u{FFFC}',
            '\u{1D159}',
            '\u{0378}',
            '\u{FDD0}',
            '\u{FFFE}',
            '\u{10FFFF}',
            '\u{20DD}',
        ] {
            assert_eq!(
                reveal(&format!("a{c}b")),
                format!("a⟨U+{:04X}⟩b", u32::from(c))
            );
        }
        assert_eq!(
            reveal(&format!("node -e {}", "\u{FFFC}".repeat(20_000))),
            "node -e ⟨U+FFFC ×20000⟩"
        );
    }

    #[test]
    fn a_question_shows_every_value_whole_and_marked() {
        let content = format!("count = 10{}import(\"node:fs\")", " ".repeat(300));
        let asked = question(
            "/p/app",
            "writes need approval",
            "write_file",
            &json!({ "path": "invoice\u{202E}txt.exe", "content": content }),
        );
        assert_eq!(
            asked,
            Ok(
                "Corral asks before this call in /p/app (writes need approval): write_file\n\
                content: count = 10⟨300 spaces⟩import(\"node:fs\")\n\
                path: invoice⟨U+202E⟩txt.exe\n\
                Allow it?"
                    .to_string()
            )
        );
    }

    #[test]
    fn a_call_too_long_to_show_is_not_asked() {
        let content = "let x = 1;\n".repeat(2000);
        let asked = question("/p", "why", "write_file", &json!({ "content": content }));
        assert_eq!(asked.map_err(|e| e.chars > MAX_QUESTION_CHARS), Err(true));
    }
}
