//! Text from the model, a tool or a file shown whole, for every host:
//! every character that is not visibly drawn becomes a marker. The
//! window draws [`pieces`] (a marker styled apart from the text), the
//! terminal, ACP and MCP print [`reveal`] (the same pieces joined).
//!
//! A rule of inclusion. Drawn as they are: letters (L*), numbers (N*),
//! punctuation (P*), symbols (S*), U+0020 SPACE, and the marks that sit
//! on one of those (Mn, Mc), up to [`MAX_MARKS`] in a row. Everything else
//! is a marker: the other separators (Zs, Zl, Zp), controls (a line feed
//! is `↵`, a tab `⇥`), format characters, private use, unassigned code
//! points and noncharacters (Cc, Cf, Co, Cn), enclosing marks (Me), every
//! Default_Ignorable_Code_Point whatever its category, and the few
//! assigned characters drawn blank ([`BLANK_GLYPHS`]). A run of the same
//! marker is counted, and so is a longer stack of marks. The window's
//! `ui/src/lib/reveal.ts` applies the same rule to what it shows besides
//! a question; `ui/src/lib/reveal.cases.json` is the table both are
//! tested on.
//!
//! ```
//! use corral_session::marked::reveal;
//! assert_eq!(reveal("invoice\u{202E}txt.exe"), "invoice⟨U+202E⟩txt.exe");
//! assert_eq!(reveal(&format!("a{}b", "\u{FFFC}".repeat(8000))), "a⟨U+FFFC ×8000⟩b");
//! ```

use icu_properties::props::{DefaultIgnorableCodePoint, GeneralCategory, GeneralCategoryGroup};
use icu_properties::{CodePointMapData, CodePointSetData};
use serde::Serialize;

/// Spaces (and tabs) past this many in a row are counted instead of drawn.
pub const LONG_SPACES: usize = 16;
/// Combining marks one character may carry before they are counted
/// (Vietnamese stacks two, some scripts three).
pub const MAX_MARKS: usize = 3;

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

/// A stretch of shown text: drawn as it is, or a marker (`mark`: what it
/// stands for, for a tooltip).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct Piece {
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub mark: Option<String>,
}

/// Pieces being made: text runs joined, markers apart.
#[derive(Default)]
struct Out(Vec<Piece>);

impl Out {
    fn text(&mut self, text: &str) {
        match self.0.last_mut() {
            Some(last) if last.mark.is_none() => last.text.push_str(text),
            _ => self.0.push(Piece {
                text: text.to_string(),
                mark: None,
            }),
        }
    }

    fn chars(&mut self, c: char, n: usize) {
        self.text(&std::iter::repeat_n(c, n).collect::<String>());
    }

    fn mark(&mut self, text: String, what: String) {
        self.0.push(Piece {
            text,
            mark: Some(what),
        });
    }
}

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

/// The names a marker's tooltip gives the characters most used to hide.
const NAMES: [(char, &str); 23] = [
    ('\u{09}', "tab"),
    ('\u{0A}', "line feed"),
    ('\u{0D}', "carriage return"),
    ('\u{1B}', "escape"),
    ('\u{A0}', "no-break space"),
    ('\u{2028}', "line separator"),
    ('\u{2029}', "paragraph separator"),
    ('\u{202A}', "left-to-right embedding"),
    ('\u{202B}', "right-to-left embedding"),
    ('\u{202C}', "pop directional formatting"),
    ('\u{202D}', "left-to-right override"),
    ('\u{202E}', "right-to-left override"),
    ('\u{2066}', "left-to-right isolate"),
    ('\u{2067}', "right-to-left isolate"),
    ('\u{2068}', "first strong isolate"),
    ('\u{2069}', "pop directional isolate"),
    ('\u{115F}', "Hangul choseong filler"),
    ('\u{1160}', "Hangul jungseong filler"),
    ('\u{2800}', "braille pattern blank"),
    ('\u{3164}', "Hangul filler"),
    ('\u{FFA0}', "halfwidth Hangul filler"),
    ('\u{FFFC}', "object replacement character"),
    ('\u{1D159}', "musical symbol null notehead"),
];

/// What a marker's tooltip says of a character with no name in [`NAMES`].
fn kind_of(c: char) -> &'static str {
    let cp = u32::from(c);
    if (0xFDD0..=0xFDEF).contains(&cp) || cp & 0xFFFE == 0xFFFE {
        return "noncharacter";
    }
    match category(c) {
        GeneralCategory::Unassigned => "unassigned",
        GeneralCategory::PrivateUse => "private use",
        GeneralCategory::EnclosingMark => "enclosing mark",
        _ => "",
    }
}

/// A marker's tooltip: the code point and what it is.
fn title_of(c: char) -> String {
    let name = NAMES
        .iter()
        .find(|(named, _)| *named == c)
        .map_or_else(|| kind_of(c), |(_, name)| name);
    if name.is_empty() {
        code_point(c)
    } else {
        format!("{} {name}", code_point(c))
    }
}

/// The marker of one hidden character: `↵` for a line feed, `⇥` for a
/// tab, else `⟨U+XXXX⟩`.
fn marker_of(out: &mut Out, c: char) {
    let text = match c {
        '\n' => "↵".to_string(),
        '\t' => "⇥".to_string(),
        _ => format!("⟨{}⟩", code_point(c)),
    };
    out.mark(text, title_of(c));
}

/// One line (no line feed) with its hidden characters marked.
/// `ended`: a line feed follows, so a CR at its end is a CRLF line end.
fn reveal_line(out: &mut Out, line: &[char], ended: bool) {
    let mut i = 0;
    while i < line.len() {
        let c = line[i];
        let run = line[i..].iter().take_while(|&&d| d == c).count();
        if c == ' ' {
            if run > LONG_SPACES {
                out.mark(format!("⟨{run} spaces⟩"), format!("{run} spaces"));
            } else {
                out.chars(' ', run);
            }
        } else if c == '\r' && run == 1 && i + 1 == line.len() && ended {
            // The CR of a CRLF line end: marked, but quieter than a lone
            // CR, which hides what follows it.
            out.mark("␍".into(), "U+000D carriage return (CRLF line end)".into());
        } else if is_hidden(c) {
            if run == 1 || (c == '\t' && run <= LONG_SPACES) {
                for _ in 0..run {
                    marker_of(out, c);
                }
            } else {
                out.mark(
                    format!("⟨{} ×{run}⟩", code_point(c)),
                    format!("{run} × {}", title_of(c)),
                );
            }
        } else if is_mark(c) {
            // A mark with nothing to sit on (line start, after a space or
            // a marker) is drawn on its own.
            let base = i > 0 && line[i - 1] != ' ' && !is_hidden(line[i - 1]);
            let marks = line[i..]
                .iter()
                .take_while(|&&d| is_mark(d) && !is_hidden(d))
                .count();
            let stack = &line[i..i + marks];
            if !base {
                for &m in stack {
                    out.mark(
                        format!("⟨{}⟩", code_point(m)),
                        format!("{} combining mark with nothing to sit on", title_of(m)),
                    );
                }
            } else if marks > MAX_MARKS {
                let text = if stack.iter().all(|&m| m == stack[0]) {
                    format!("⟨{} ×{marks}⟩", code_point(stack[0]))
                } else {
                    format!("⟨{marks} combining marks⟩")
                };
                let mut kinds: Vec<char> = Vec::new();
                for &m in stack {
                    if !kinds.contains(&m) {
                        kinds.push(m);
                    }
                }
                let listed: Vec<String> = kinds.iter().take(8).map(|&m| code_point(m)).collect();
                out.mark(
                    text,
                    format!("{marks} combining marks: {}", listed.join(" ")),
                );
            } else {
                out.text(&stack.iter().collect::<String>());
            }
            i += marks;
            continue;
        } else {
            out.chars(c, run);
        }
        i += run;
    }
}

/// `text` as pieces, every hidden character a marker: `↵` for a line
/// feed (followed by a real line break only before a line with something
/// to show, so empty lines cannot push the rest out of sight), `⇥` for a
/// tab, `⟨U+XXXX⟩` for the others, `⟨U+XXXX ×n⟩` for a run of one, `⟨n
/// spaces⟩` for more than [`LONG_SPACES`] spaces.
pub fn pieces(text: &str) -> Vec<Piece> {
    let lines: Vec<Vec<char>> = text.split('\n').map(|l| l.chars().collect()).collect();
    let mut out = Out::default();
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            marker_of(&mut out, '\n');
            if line.iter().any(|&c| c != ' ' && !is_hidden(c)) {
                out.text("\n");
            }
        }
        reveal_line(&mut out, line, i + 1 < lines.len());
    }
    out.0
}

/// The lines of a file's text that are not drawn as they are, by index
/// (0-based): each one's pieces as a diff row shows it (a CR before the
/// line feed is a CRLF line end). A plain line is left out, so a change
/// of plain text costs nothing more.
pub fn marked_lines(text: &str) -> std::collections::BTreeMap<usize, Vec<Piece>> {
    let lines: Vec<&str> = text.split('\n').collect();
    let last = lines.len() - 1;
    lines
        .iter()
        .enumerate()
        .filter_map(|(at, line)| {
            let chars: Vec<char> = line.chars().collect();
            let mut out = Out::default();
            reveal_line(&mut out, &chars, at < last);
            let plain = out.0.iter().all(|piece| piece.mark.is_none());
            (!plain).then_some((at, out.0))
        })
        .collect()
}

/// `text` with every hidden character as a marker ([`pieces`] joined).
pub fn reveal(text: &str) -> String {
    pieces(text).into_iter().map(|piece| piece.text).collect()
}

/// A call as a question shows it, marked: why it asks, each field of its
/// input in order (a list of strings item by item, a command's
/// arguments), where each path it names leads, and the lines of its
/// change that are not drawn as they are.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ShownCall {
    pub reason: Vec<Piece>,
    pub fields: Vec<ShownField>,
    /// As the ticket's `paths`: each path as typed and where it leads.
    pub paths: Vec<ShownPath>,
    /// The preview's lines before and after the change ([`marked_lines`]):
    /// only those with a marker, by 0-based index; a line not listed is
    /// drawn as it is.
    #[serde(default, skip_serializing_if = "ShownChange::is_empty")]
    #[ts(as = "Option<ShownChange>", optional)]
    pub change: ShownChange,
}

/// The marked lines of a change's two sides.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ShownChange {
    #[ts(type = "Record<number, Array<Piece>>")]
    pub before: std::collections::BTreeMap<usize, Vec<Piece>>,
    #[ts(type = "Record<number, Array<Piece>>")]
    pub after: std::collections::BTreeMap<usize, Vec<Piece>>,
}

impl ShownChange {
    /// The marked lines of `before` and `after`.
    pub fn of(before: &str, after: &str) -> ShownChange {
        ShownChange {
            before: marked_lines(before),
            after: marked_lines(after),
        }
    }

    fn is_empty(&self) -> bool {
        self.before.is_empty() && self.after.is_empty()
    }
}

/// One field of a call's input, marked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ShownField {
    /// The field's name as the input has it (to find it by).
    pub name: String,
    /// The name, marked.
    pub key: Vec<Piece>,
    /// The value: a string as itself, anything else as JSON.
    pub value: Vec<Piece>,
    /// For a list of strings, each item on its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub items: Option<Vec<Vec<Piece>>>,
}

/// A path as typed and where it leads, marked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ShownPath {
    pub typed: Vec<Piece>,
    pub inside: Vec<Piece>,
}

impl ShownCall {
    /// `reason` and `input`'s fields marked, and `paths` (typed, where it
    /// leads); its change is added by the caller when it has one.
    pub fn of<'a>(
        reason: &str,
        input: &serde_json::Value,
        paths: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> ShownCall {
        let fields = input
            .as_object()
            .into_iter()
            .flatten()
            .map(|(name, value)| ShownField {
                name: name.clone(),
                key: pieces(name),
                value: pieces(
                    &value
                        .as_str()
                        .map_or_else(|| value.to_string(), str::to_string),
                ),
                items: value.as_array().and_then(|items| {
                    items
                        .iter()
                        .map(|item| item.as_str().map(pieces))
                        .collect::<Option<Vec<_>>>()
                }),
            })
            .collect();
        let paths = paths
            .into_iter()
            .map(|(typed, inside)| ShownPath {
                typed: pieces(typed),
                inside: pieces(inside),
            })
            .collect();
        ShownCall {
            reason: pieces(reason),
            fields,
            paths,
            change: ShownChange::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn joined(pieces: &[Piece]) -> String {
        pieces.iter().map(|p| p.text.as_str()).collect()
    }

    #[test]
    fn a_marker_is_a_piece_of_its_own_and_text_runs_are_joined() {
        let shown = pieces("rm -rf\u{202E} /\u{2028}x");
        assert_eq!(
            shown,
            [
                Piece {
                    text: "rm -rf".into(),
                    mark: None
                },
                Piece {
                    text: "⟨U+202E⟩".into(),
                    mark: Some("U+202E right-to-left override".into())
                },
                Piece {
                    text: " /".into(),
                    mark: None
                },
                Piece {
                    text: "⟨U+2028⟩".into(),
                    mark: Some("U+2028 line separator".into())
                },
                Piece {
                    text: "x".into(),
                    mark: None
                },
            ]
        );
        // Literal marker text the model wrote stays text: only a real
        // hidden character is a marker.
        let typed = pieces("⟨U+202E⟩");
        assert_eq!(typed.len(), 1);
        assert_eq!(typed[0].mark, None);
    }

    #[test]
    fn only_the_lines_of_a_change_with_a_marker_are_listed_each_as_a_row_shows_it() {
        let text = "plain\r\nhidden\u{202E}here\r\n\tindented\nlast\r";
        let marked = marked_lines(text);
        let rows: Vec<(usize, String)> = marked.iter().map(|(at, p)| (*at, joined(p))).collect();
        assert_eq!(
            rows,
            [
                (0, "plain␍".to_string()),
                (1, "hidden⟨U+202E⟩here␍".to_string()),
                (2, "⇥indented".to_string()),
                (3, "last⟨U+000D⟩".to_string()),
            ]
        );
        assert!(marked_lines("a\nb c\n").is_empty());
    }

    #[test]
    fn a_call_is_shown_field_by_field_and_its_arguments_item_by_item() {
        let input = json!({
            "command": "node",
            "args": ["-e", format!("1{}2", " ".repeat(400))],
            "timeout_secs": 30,
        });
        let shown = ShownCall::of("it runs code", &input, [("a\u{200B}b", "ab")]);
        assert_eq!(joined(&shown.reason), "it runs code");
        let field = |name: &str| shown.fields.iter().find(|f| f.name == name).unwrap();
        assert_eq!(shown.fields.len(), 3);
        assert_eq!(joined(&field("command").value), "node");
        let items = field("args").items.as_ref().unwrap();
        assert_eq!(joined(&items[1]), "1⟨400 spaces⟩2");
        assert_eq!(items[1][1].mark.as_deref(), Some("400 spaces"));
        assert_eq!(joined(&field("timeout_secs").value), "30");
        assert!(field("timeout_secs").items.is_none());
        assert_eq!(joined(&shown.paths[0].typed), "a⟨U+200B⟩b");
    }
}
