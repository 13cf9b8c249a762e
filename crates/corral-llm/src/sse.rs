//! A byte-level Server-Sent Events parser.
//!
//! Fed the body in whatever pieces the network delivers — an event, a line,
//! a UTF-8 character or a `\r\n` may be split anywhere — it yields complete
//! events. Lines end in `\n`, `\r\n` or a lone `\r` (the SSE spec allows
//! all three); lines starting with `:` are keep-alive comments.
//!
//! The same parser frames newline-delimited JSON (Ollama's native stream,
//! [`SseParser::lines`]): there every non-blank line is one event.

use crate::error::LlmError;

/// The most one event (a line, or the data lines joined) may hold. Events
/// of both protocols are a few KiB; a server sending an endless line must
/// not fill memory.
pub(crate) const MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// The `event:` field; empty when the server sent none.
    pub event: String,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
}

/// Incremental parser; keep one per response body.
#[derive(Debug)]
pub(crate) struct SseParser {
    /// Bytes of the current, unfinished line.
    line: Vec<u8>,
    /// The previous byte was a `\r` that ended a line: a `\n` right after it
    /// belongs to the same line end.
    after_cr: bool,
    /// Whether the body's first bytes were checked for a BOM.
    started: bool,
    event: String,
    data: String,
    has_data: bool,
    /// An event or a keep-alive comment was completed since the last
    /// [`SseParser::take_progress`].
    progress: bool,
    /// [`MAX_EVENT_BYTES`], smaller in tests.
    limit: usize,
    /// Each non-blank line is an event of its own (NDJSON), not a field.
    lines: bool,
}

impl Default for SseParser {
    fn default() -> Self {
        SseParser {
            line: Vec::new(),
            after_cr: false,
            started: false,
            event: String::new(),
            data: String::new(),
            has_data: false,
            progress: false,
            limit: MAX_EVENT_BYTES,
            lines: false,
        }
    }
}

impl SseParser {
    /// A parser of newline-delimited JSON: each non-blank line is one
    /// event (its `data`, with no `event`), whatever it starts with.
    pub fn lines() -> Self {
        SseParser {
            lines: true,
            ..SseParser::default()
        }
    }

    /// Feeds the next piece of the body; complete events go to `out`. Fails
    /// when a line or an event grows past [`MAX_EVENT_BYTES`] (the events
    /// completed before it are in `out`).
    pub fn push(&mut self, mut bytes: &[u8], out: &mut Vec<SseEvent>) -> Result<(), LlmError> {
        if !self.started && !bytes.is_empty() {
            self.started = true;
            if let Some(rest) = bytes.strip_prefix(b"\xEF\xBB\xBF".as_slice()) {
                bytes = rest;
            }
        }
        while let Some((&first, rest)) = bytes.split_first() {
            if first == b'\n' && self.after_cr {
                self.after_cr = false;
                bytes = rest;
                continue;
            }
            self.after_cr = false;
            let Some(end) = bytes.iter().position(|&b| b == b'\n' || b == b'\r') else {
                return self.grow_line(bytes);
            };
            self.grow_line(&bytes[..end])?;
            self.after_cr = bytes[end] == b'\r';
            let line = std::mem::take(&mut self.line);
            self.on_line(&line, out)?;
            // Keep the allocation for the next line.
            self.line = line;
            self.line.clear();
            bytes = &bytes[end + 1..];
        }
        Ok(())
    }

    /// Ends the body: a last line without its newline, and a last event
    /// without its blank line, are still delivered (servers do end so).
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) -> Result<(), LlmError> {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.on_line(&line, out)?;
        }
        self.on_line(b"", out)
    }

    /// Whether an event or a keep-alive comment was completed since the
    /// last call: the server is alive, not dripping a line byte by byte.
    pub fn take_progress(&mut self) -> bool {
        std::mem::take(&mut self.progress)
    }

    /// Whether part of a line or an event is waiting for its end.
    pub fn has_partial(&self) -> bool {
        !self.line.is_empty() || self.has_data
    }

    fn grow_line(&mut self, bytes: &[u8]) -> Result<(), LlmError> {
        if self.line.len() + bytes.len() > self.limit {
            return Err(self.too_large());
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    fn too_large(&self) -> LlmError {
        LlmError::TooLarge {
            what: "a stream event",
            limit: self.limit,
        }
    }

    fn on_line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) -> Result<(), LlmError> {
        if self.lines {
            if !line.iter().all(u8::is_ascii_whitespace) {
                self.progress = true;
                out.push(SseEvent {
                    event: String::new(),
                    data: String::from_utf8_lossy(line).into_owned(),
                });
            }
            return Ok(());
        }
        if line.is_empty() {
            if self.has_data {
                self.progress = true;
                out.push(SseEvent {
                    event: std::mem::take(&mut self.event),
                    data: std::mem::take(&mut self.data),
                });
            }
            self.event.clear();
            self.data.clear();
            self.has_data = false;
            return Ok(());
        }
        if line[0] == b':' {
            self.progress = true;
            return Ok(());
        }
        let line = String::from_utf8_lossy(line);
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_ref(), ""),
        };
        match field {
            "event" => self.event = value.to_string(),
            "data" => {
                if self.data.len() + value.len() + 1 > self.limit {
                    return Err(self.too_large());
                }
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            _ => {} // id, retry: a single response has no use for them
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(event: &str, data: &str) -> SseEvent {
        SseEvent {
            event: event.into(),
            data: data.into(),
        }
    }

    fn parse_in_pieces(body: &[u8], piece: usize) -> Vec<SseEvent> {
        let mut parser = SseParser::default();
        let mut out = Vec::new();
        for chunk in body.chunks(piece) {
            parser.push(chunk, &mut out).unwrap();
        }
        parser.finish(&mut out).unwrap();
        out
    }

    #[test]
    fn parses_events_split_anywhere() {
        let body = "\u{feff}: keep-alive\r\nevent: a\r\ndata: {\"t\":\"h\u{e9}\u{1f600}\"}\r\n\r\n\
                    data:x\ndata: y\n\nevent: b\rdata: z\r\r: ping\n\ndata: [DONE]";
        let want = vec![
            ev("a", "{\"t\":\"h\u{e9}\u{1f600}\"}"),
            ev("", "x\ny"),
            ev("b", "z"),
            ev("", "[DONE]"),
        ];
        for piece in 1..=body.len() {
            assert_eq!(
                parse_in_pieces(body.as_bytes(), piece),
                want,
                "piece size {piece}"
            );
        }
    }

    #[test]
    fn a_line_or_an_event_over_the_limit_fails() {
        let limit = |body: &[u8], piece: usize| {
            let mut parser = SseParser {
                limit: 8,
                ..SseParser::default()
            };
            let mut out = Vec::new();
            let fed = body
                .chunks(piece)
                .try_for_each(|chunk| parser.push(chunk, &mut out))
                .and_then(|()| parser.finish(&mut out));
            (out, fed.map_err(|e| e.to_string()))
        };
        for piece in 1..=12 {
            // A line of exactly the limit is fine; one byte more is not.
            assert_eq!(limit(b"data:123\n\n", piece), (vec![ev("", "123")], Ok(())));
            assert_eq!(
                limit(b"data:1\n\n: 12345678\n", piece),
                (vec![ev("", "1")], Err("a stream event over 8 bytes".into()))
            );
            // Lines under the limit that add up past it.
            assert_eq!(
                limit(b"data:123\ndata:456\ndata:78\n\n", piece).1,
                Err("a stream event over 8 bytes".into())
            );
        }
    }

    #[test]
    fn progress_is_a_complete_event_or_comment() {
        let mut parser = SseParser::default();
        let mut out = Vec::new();
        parser.push(b"data: {\"a\"", &mut out).unwrap();
        assert!(!parser.take_progress() && parser.has_partial());
        parser.push(b":1}\n", &mut out).unwrap();
        assert!(!parser.take_progress() && parser.has_partial());
        parser.push(b"\n: keep-alive", &mut out).unwrap();
        assert!(parser.take_progress() && parser.has_partial());
        parser.push(b"\n", &mut out).unwrap();
        assert!(parser.take_progress() && !parser.has_partial());
        assert!(!parser.take_progress());
    }

    #[test]
    fn ndjson_lines_are_events_split_anywhere() {
        let body = "{\"a\":\"h\u{e9}\u{1f600}\"}\n\n{\"b\":2}\r\n  \n:{\"c\":3}\n{\"d\":4}";
        let want = vec![
            ev("", "{\"a\":\"h\u{e9}\u{1f600}\"}"),
            ev("", "{\"b\":2}"),
            ev("", ":{\"c\":3}"),
            ev("", "{\"d\":4}"),
        ];
        for piece in 1..=body.len() {
            let mut parser = SseParser::lines();
            let mut out = Vec::new();
            for chunk in body.as_bytes().chunks(piece) {
                parser.push(chunk, &mut out).unwrap();
            }
            parser.finish(&mut out).unwrap();
            assert_eq!(out, want, "piece size {piece}");
        }
    }

    #[test]
    fn events_without_data_are_not_dispatched() {
        assert_eq!(parse_in_pieces(b"event: ping\n\n\n\nid: 3\n\n", 4), vec![]);
        assert_eq!(parse_in_pieces(b"data:\n\n", 4), vec![ev("", "")]);
    }
}
