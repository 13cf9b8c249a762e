//! Text decoding shared by the file tools: UTF-8 only, BOM kept aside,
//! binaries refused, CRLF detected so edits can keep it.

use crate::error::{Error, ErrorCode, Result};

const BOM: &[u8] = b"\xEF\xBB\xBF";
/// How much of a file is sniffed for NUL bytes (git and ripgrep do the same).
const SNIFF_BYTES: usize = 8192;

/// A decoded text file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text {
    /// The file started with a UTF-8 byte order mark (not part of `body`).
    pub bom: bool,
    pub body: String,
}

impl Text {
    /// Back to the exact bytes: BOM first if there was one.
    pub fn into_bytes(self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.body.len() + 3);
        if self.bom {
            out.extend_from_slice(BOM);
        }
        out.extend_from_slice(self.body.as_bytes());
        out
    }
}

/// Decodes file bytes, or fails with `not_text` naming why.
pub fn decode(bytes: Vec<u8>, path: &str) -> Result<Text> {
    let sniff = &bytes[..bytes.len().min(SNIFF_BYTES)];
    if sniff.contains(&0) {
        return Err(not_text(path, "it contains NUL bytes (a binary file)"));
    }
    let (bom, mut bytes) = match bytes.strip_prefix(BOM) {
        Some(_) => (true, bytes),
        None => (false, bytes),
    };
    if bom {
        bytes.drain(..BOM.len());
    }
    match String::from_utf8(bytes) {
        Ok(body) => Ok(Text { bom, body }),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            Err(not_text(path, &format!("it is not valid UTF-8 (at byte {at})")).detail("byte", at))
        }
    }
}

fn not_text(path: &str, why: &str) -> Error {
    Error::new(
        ErrorCode::NotText,
        format!("`{path}` is not a text file: {why}"),
    )
    .detail("path", path)
}

/// True when every line break is CRLF (and there is at least one).
pub fn is_crlf(body: &str) -> bool {
    let lf = body.matches('\n').count();
    lf > 0 && body.matches("\r\n").count() == lf
}

/// Cuts a line longer than `max` characters, with a marker saying how much.
pub fn cut_line(line: &str, max: usize) -> std::borrow::Cow<'_, str> {
    let content = line.trim_end_matches(['\r', '\n']);
    let ending = &line[content.len()..];
    match content.char_indices().nth(max) {
        None => std::borrow::Cow::Borrowed(line),
        Some((at, _)) => {
            let rest = content[at..].chars().count();
            std::borrow::Cow::Owned(format!(
                "{}… [line cut: {rest} more characters]{ending}",
                &content[..at]
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_bom_aside_and_restores_it() {
        let text = decode(b"\xEF\xBB\xBFhi\n".to_vec(), "a").unwrap();
        assert!(text.bom);
        assert_eq!(text.body, "hi\n");
        assert_eq!(text.into_bytes(), b"\xEF\xBB\xBFhi\n");
    }

    #[test]
    fn refuses_binary_and_bad_utf8() {
        assert_eq!(
            decode(b"a\0b".to_vec(), "a").unwrap_err().code,
            ErrorCode::NotText
        );
        let err = decode(b"ok\xFF".to_vec(), "a").unwrap_err();
        assert_eq!(err.code, ErrorCode::NotText);
        assert_eq!(err.details["byte"], 2);
    }

    #[test]
    fn detects_crlf_only_when_consistent() {
        assert!(is_crlf("a\r\nb\r\n"));
        assert!(!is_crlf("a\r\nb\n"));
        assert!(!is_crlf("ab"));
    }

    #[test]
    fn cuts_long_lines_with_marker_and_keeps_ending() {
        assert_eq!(
            cut_line("abcdef\n", 3),
            "abc… [line cut: 3 more characters]\n"
        );
        assert_eq!(cut_line("abc\n", 3), "abc\n");
    }
}
