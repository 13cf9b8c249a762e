//! The approval question put to an MCP client's user: the call shown
//! whole, every hidden character marked, or not asked at all.
//!
//! A client draws the question as plain text in a dialog of its own, so
//! whatever the text hides stays hidden: 300 spaces push a payload past the
//! dialog's edge, 6,000 braille blanks push it below, a bidi override
//! reorders what follows, a lone CR makes code look like part of a
//! comment. So each value is shown whole, with the same markers as the
//! app's approval area (`ui/src/lib/reveal.ts`): which characters are
//! marked is decided by their Unicode properties (Cc, Cf, Zl, Zp, Co, the
//! space separators other than U+0020, Default_Ignorable_Code_Point, and
//! the braille blank U+2800, drawn blank although it is a symbol), a run
//! of the same one is counted, and more than [`MAX_MARKS`] combining marks
//! on one character are counted too. A call too long to show whole in a
//! question is not asked about: [`question`] says why instead.
//!
//! ```
//! use corral_mcp::question::reveal;
//! assert_eq!(reveal("invoice\u{202E}txt.exe"), "invoice⟨U+202E⟩txt.exe");
//! assert_eq!(reveal(&format!("a{}b", "\u{2800}".repeat(6000))), "a⟨U+2800 ×6000⟩b");
//! ```

use icu_properties::props::{DefaultIgnorableCodePoint, GeneralCategory};
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

/// Whether `c` draws nothing, looks blank, breaks the line or reorders
/// what follows.
pub fn is_hidden(c: char) -> bool {
    let category = CodePointMapData::<GeneralCategory>::new().get(c);
    matches!(
        category,
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
            | GeneralCategory::PrivateUse
            | GeneralCategory::Surrogate
    ) || (category == GeneralCategory::SpaceSeparator && c != ' ')
        || CodePointSetData::new::<DefaultIgnorableCodePoint>().contains(c)
        // Braille pattern blank: a symbol (So) drawn as nothing.
        || c == '\u{2800}'
}

fn is_mark(c: char) -> bool {
    matches!(
        CodePointMapData::<GeneralCategory>::new().get(c),
        GeneralCategory::NonspacingMark
            | GeneralCategory::SpacingMark
            | GeneralCategory::EnclosingMark
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
            if run == 1 {
                out.push_str(&format!("⟨{}⟩", code_point(c)));
            } else if c == '\t' && run <= LONG_SPACES {
                out.extend(std::iter::repeat_n('⇥', run));
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

/// The question for `tool` called with `input` in `root`, asked because
/// of `reason`: every field on its own line, whole and marked. `Err` when
/// it would be longer than [`MAX_QUESTION_CHARS`]: such a call is not
/// asked about, since no dialog shows it whole.
pub fn question(root: &str, reason: &str, tool: &str, input: &Value) -> Result<String, TooLong> {
    let mut text = format!(
        "Corral asks before this call in {} ({}): {tool}\n",
        reveal(root),
        reveal(reason)
    );
    for (key, value) in input.as_object().into_iter().flatten() {
        let shown = value
            .as_str()
            .map_or_else(|| value.to_string(), str::to_string);
        text.push_str(&format!("{}: {}\n", reveal(key), reveal(&shown)));
    }
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

    fn marked(c: char) -> String {
        reveal(&format!("a{c}b"))
    }

    #[test]
    fn every_property_the_decision_rests_on_is_marked() {
        // One example per category or property; none of them is named in the code.
        let cases = [
            ('\u{0001}', "Cc: C0 control"),
            ('\u{0090}', "Cc: C1 control"),
            ('\u{00AD}', "Cf: soft hyphen"),
            ('\u{061C}', "Cf: Arabic letter mark"),
            ('\u{180E}', "Cf: Mongolian vowel separator"),
            ('\u{202E}', "Cf: right-to-left override"),
            ('\u{2066}', "Cf: left-to-right isolate"),
            ('\u{2062}', "Cf: invisible times"),
            ('\u{E0041}', "Cf: tag letter"),
            ('\u{2028}', "Zl: line separator"),
            ('\u{2029}', "Zp: paragraph separator"),
            ('\u{00A0}', "Zs: no-break space"),
            ('\u{1680}', "Zs: ogham space mark"),
            ('\u{3000}', "Zs: ideographic space"),
            ('\u{E000}', "Co: private use"),
            ('\u{115F}', "DI: Hangul choseong filler"),
            ('\u{1160}', "DI: Hangul jungseong filler"),
            ('\u{3164}', "DI: Hangul filler"),
            ('\u{FFA0}', "DI: halfwidth Hangul filler"),
            ('\u{034F}', "DI: combining grapheme joiner"),
            ('\u{17B4}', "DI: Khmer vowel inherent aq"),
            ('\u{FE0F}', "DI: variation selector 16"),
            ('\u{E01EF}', "DI: variation selector 256"),
            ('\u{2065}', "DI: unassigned, default ignorable"),
            ('\u{2800}', "blank glyph: braille pattern blank"),
        ];
        for (c, what) in cases {
            assert_eq!(marked(c), format!("a⟨U+{:04X}⟩b", u32::from(c)), "{what}");
        }
        for visible in ['a', '-', '€', 'ß', 'é', 'あ', '\u{2801}', '😀'] {
            assert_eq!(reveal(&visible.to_string()), visible.to_string());
        }
    }

    #[test]
    fn runs_are_counted_and_lines_kept_in_sight() {
        let cases = [
            (
                format!("node{}x", "\u{2800}".repeat(6000)),
                "node⟨U+2800 ×6000⟩x",
            ),
            ("a\u{200B}\u{200B}b".to_string(), "a⟨U+200B ×2⟩b"),
            (format!("ok{}rm", " ".repeat(300)), "ok⟨300 spaces⟩rm"),
            (format!("a{}b", " ".repeat(16)), "a                b"),
            (format!("a{}b", "\t".repeat(3)), "a⇥⇥⇥b"),
            (format!("a{}b", "\t".repeat(17)), "a⟨U+0009 ×17⟩b"),
            ("x = 1;\rrun()".to_string(), "x = 1;⟨U+000D⟩run()"),
            ("a\r\nb".to_string(), "a␍↵\nb"),
            ("one\ntwo".to_string(), "one↵\ntwo"),
        ];
        for (text, shown) in cases {
            assert_eq!(reveal(&text), shown);
        }
    }

    #[test]
    fn forty_empty_lines_are_one_row_of_markers() {
        assert_eq!(
            reveal(&format!("log(1){}rm()", "\n".repeat(40))),
            format!("log(1){}\nrm()", "↵".repeat(40))
        );
    }

    #[test]
    fn combining_marks_stay_on_their_letter_until_they_stack() {
        let cases = [
            ("e\u{0301}", "e\u{0301}"),
            ("a\u{0301}\u{0302}\u{0303}", "a\u{0301}\u{0302}\u{0303}"),
            (
                "a\u{0301}\u{0302}\u{0303}\u{0304}z",
                "a⟨4 combining marks⟩z",
            ),
            ("\u{0301}x", "⟨U+0301⟩x"),
            ("x \u{0301}", "x ⟨U+0301⟩"),
        ];
        for (text, shown) in cases {
            assert_eq!(reveal(text), shown);
        }
        assert_eq!(
            reveal(&format!("a{}b", "\u{0336}".repeat(40))),
            "a⟨U+0336 ×40⟩b"
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
