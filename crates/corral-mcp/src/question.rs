//! The approval question put to an MCP client's user: the call shown
//! whole, every character that is not visibly drawn marked, or not asked
//! at all.
//!
//! A client draws the question as plain text in a dialog of its own, so
//! whatever the text hides stays hidden: 300 spaces push a payload past the
//! dialog's edge, 6,000 braille blanks or 8,000 object replacement
//! characters push it out of sight, a bidi override reorders what follows,
//! a lone CR makes code look like part of a comment. So each value is
//! shown whole, with the same markers and the same rule as the app's
//! approval area (`ui/src/lib/reveal.ts`), a rule of inclusion. Drawn as
//! they are: letters (L*), numbers (N*), punctuation (P*), symbols (S*),
//! U+0020 SPACE, and the marks that sit on one of those (Mn, Mc), up to
//! [`MAX_MARKS`] in a row. Everything else is a marker: the other
//! separators (Zs, Zl, Zp), controls (a line feed is `↵`, a tab `⇥`),
//! format characters, private use, unassigned code points and
//! noncharacters (Cc, Cf, Co, Cn), enclosing marks (Me), every
//! Default_Ignorable_Code_Point whatever its category, and the few
//! assigned characters drawn blank ([`BLANK_GLYPHS`]). A run of the same
//! marker is counted, and so is a longer stack of marks. A call too long
//! to show whole in a question is not asked about: [`question`] says why
//! instead.
//!
//! ```
//! use corral_mcp::question::reveal;
//! assert_eq!(reveal("invoice\u{202E}txt.exe"), "invoice⟨U+202E⟩txt.exe");
//! assert_eq!(reveal(&format!("a{}b", "\u{FFFC}".repeat(8000))), "a⟨U+FFFC ×8000⟩b");
//! ```

use icu_properties::props::{DefaultIgnorableCodePoint, GeneralCategory, GeneralCategoryGroup};
use icu_properties::{CodePointMapData, CodePointSetData};
use serde_json::Value;

/// Spaces (and tabs) past this many in a row are counted instead of drawn.
pub const LONG_SPACES: usize = 16;
/// Combining marks one character may carry before they are counted
/// (Vietnamese stacks two, some scripts three).
pub const MAX_MARKS: usize = 3;
/// The longest question asked, in characters once marked: a dialog that
/// must scroll or cut a longer one would hide part of what is approved.
pub const MAX_QUESTION_CHARS: usize = 16_000;

/// Assigned letters and symbols whose glyph is blank: their category says
/// drawn, the screen shows an empty space. Kept short, each one why:
/// U+115F, U+1160, U+3164, U+FFA0 Hangul fillers (Lo; also default
/// ignorable): stand for a missing jamo and have no ink. U+2800 braille
/// pattern blank (So): the cell with no dots. U+FFFC object replacement
/// character (So): stands for an embedded object, so fonts draw an empty
/// gap. U+1D159 musical symbol null notehead (So): a notehead with no ink.
pub const BLANK_GLYPHS: [char; 7] = [
    '\u{115F}',
    '\u{1160}',
    '\u{2800}',
    '\u{3164}',
    '\u{FFA0}',
    '\u{FFFC}',
    '\u{1D159}',
];

fn category(c: char) -> GeneralCategory {
    CodePointMapData::<GeneralCategory>::new().get(c)
}

/// Whether `c` is drawn as a marker: it is neither drawn as it is (a
/// letter, number, punctuation, symbol or U+0020) nor a mark that sits on
/// a base (Mn, Mc), or it is default ignorable or a blank glyph.
pub fn is_hidden(c: char) -> bool {
    if c == ' ' {
        return false;
    }
    let drawn = GeneralCategoryGroup::Letter
        .union(GeneralCategoryGroup::Number)
        .union(GeneralCategoryGroup::Punctuation)
        .union(GeneralCategoryGroup::Symbol)
        .contains(category(c));
    !(drawn || is_mark(c))
        || CodePointSetData::new::<DefaultIgnorableCodePoint>().contains(c)
        || BLANK_GLYPHS.contains(&c)
}

/// A mark drawn on the character before it (not Me: an enclosing mark can
/// cover a whole line).
fn is_mark(c: char) -> bool {
    matches!(
        category(c),
        GeneralCategory::NonspacingMark | GeneralCategory::SpacingMark
    )
}

fn code_point(c: char) -> String {
    format!("U+{:04X}", u32::from(c))
}

/// One line (no line feed) with its hidden characters marked.
/// `ended`: a line feed follows, so a CR at its end is a CRLF line end.
fn reveal_line(out: &mut String, line: &[char], ended: bool) {
    let mut i = 0;
    while i < line.len() {
        let c = line[i];
        let run = line[i..].iter().take_while(|&&d| d == c).count();
        if c == ' ' {
            if run > LONG_SPACES {
                out.push_str(&format!("⟨{run} spaces⟩"));
            } else {
                out.extend(std::iter::repeat_n(' ', run));
            }
        } else if c == '\r' && run == 1 && i + 1 == line.len() && ended {
            out.push('␍');
        } else if is_hidden(c) {
            if c == '\t' && run <= LONG_SPACES {
                out.extend(std::iter::repeat_n('⇥', run));
            } else if run == 1 {
                out.push_str(&format!("⟨{}⟩", code_point(c)));
            } else {
                out.push_str(&format!("⟨{} ×{run}⟩", code_point(c)));
            }
        } else if is_mark(c) {
            let base = i > 0 && line[i - 1] != ' ' && !is_hidden(line[i - 1]);
            let marks = line[i..]
                .iter()
                .take_while(|&&d| is_mark(d) && !is_hidden(d))
                .count();
            let stack = &line[i..i + marks];
            if !base {
                for &m in stack {
                    out.push_str(&format!("⟨{}⟩", code_point(m)));
                }
            } else if marks > MAX_MARKS {
                if stack.iter().all(|&m| m == stack[0]) {
                    out.push_str(&format!("⟨{} ×{marks}⟩", code_point(stack[0])));
                } else {
                    out.push_str(&format!("⟨{marks} combining marks⟩"));
                }
            } else {
                out.extend(stack);
            }
            i += marks;
            continue;
        } else {
            out.extend(std::iter::repeat_n(c, run));
        }
        i += run;
    }
}

/// `text` with every hidden character as a marker: `↵` for a line feed
/// (followed by a real line break only before a line with something to
/// show, so empty lines cannot push the rest out of sight), `⇥` for a tab,
/// `⟨U+XXXX⟩` for the others, `⟨U+XXXX ×n⟩` for a run of one, `⟨n
/// spaces⟩` for more than [`LONG_SPACES`] spaces.
pub fn reveal(text: &str) -> String {
    let lines: Vec<Vec<char>> = text.split('\n').map(|l| l.chars().collect()).collect();
    let mut out = String::with_capacity(text.len());
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            out.push('↵');
            if line.iter().any(|&c| c != ' ' && !is_hidden(c)) {
                out.push('\n');
            }
        }
        reveal_line(&mut out, line, i + 1 < lines.len());
    }
    out
}

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
