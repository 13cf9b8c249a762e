//! A matched line as the model sees it: no line ending, long lines cut to a
//! window around the match.

use std::borrow::Cow;

/// Lines longer than this many characters are cut.
const CUT_ABOVE: usize = 250;
/// Characters kept of a cut line.
const WINDOW: usize = 200;
/// Of those, how many come before the match when there is room.
const BEFORE_MATCH: usize = 60;

/// The line without `\n` / `\r\n`.
pub(super) fn strip_ending(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// The 1-based character column of byte offset `at` in `line`, and the text
/// to show (cut around `at` if long). Invalid UTF-8 is shown as U+FFFD.
pub(super) fn excerpt(line: &[u8], at: usize) -> (u64, String) {
    let at = at.min(line.len());
    let before = String::from_utf8_lossy(&line[..at]).chars().count();
    let text = String::from_utf8_lossy(line);
    (before as u64 + 1, cut_around(text, before))
}

/// Cuts `text` to [`WINDOW`] characters around character `at`, with markers
/// like `read_file`'s (`… [line cut: N more characters]`).
fn cut_around(text: Cow<'_, str>, at: usize) -> String {
    let total = text.chars().count();
    if total <= CUT_ABOVE {
        return text.into_owned();
    }
    let first = at.saturating_sub(BEFORE_MATCH).min(total - WINDOW);
    let last = first + WINDOW;
    let byte_of = |n: usize| {
        text.char_indices()
            .nth(n)
            .map_or(text.len(), |(byte, _)| byte)
    };
    let (from, to) = (byte_of(first), byte_of(last));
    let mut out = String::with_capacity(to - from + 80);
    if first > 0 {
        out.push_str(&format!("[line cut: {first} characters before] …"));
    }
    out.push_str(&text[from..to]);
    if last < total {
        out.push_str(&format!("… [line cut: {} more characters]", total - last));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_lines_are_kept_whole() {
        assert_eq!(excerpt(b"a naive line", 2), (3, "a naive line".to_string()));
    }

    #[test]
    fn columns_count_characters() {
        let line = "日本 naïve x".as_bytes();
        let at = "日本 naïve ".len();
        assert_eq!(excerpt(line, at).0, 10);
    }

    #[test]
    fn strips_lf_and_crlf() {
        assert_eq!(strip_ending(b"a\r\n"), b"a");
        assert_eq!(strip_ending(b"a\n"), b"a");
        assert_eq!(strip_ending(b"a"), b"a");
    }

    #[test]
    fn long_lines_are_cut_around_the_match() {
        let line = format!("{}NEEDLE{}", "a".repeat(500), "b".repeat(500));
        let (column, text) = excerpt(line.as_bytes(), 500);
        assert_eq!(column, 501);
        assert_eq!(
            text,
            format!(
                "[line cut: 440 characters before] …{}NEEDLE{}… [line cut: 366 more characters]",
                "a".repeat(60),
                "b".repeat(134)
            )
        );
    }

    #[test]
    fn a_match_near_either_end_keeps_a_full_window() {
        let line = "x".repeat(300);
        let (_, text) = excerpt(line.as_bytes(), 0);
        assert_eq!(
            text,
            format!("{}… [line cut: 100 more characters]", "x".repeat(200))
        );
        let (_, text) = excerpt(line.as_bytes(), 299);
        assert_eq!(
            text,
            format!("[line cut: 100 characters before] …{}", "x".repeat(200))
        );
    }
}
