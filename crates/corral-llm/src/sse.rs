//! A byte-level Server-Sent Events parser.
//!
//! Fed the body in whatever pieces the network delivers — an event, a line,
//! a UTF-8 character or a `\r\n` may be split anywhere — it yields complete
//! events. Lines end in `\n`, `\r\n` or a lone `\r` (the SSE spec allows
//! all three); lines starting with `:` are keep-alive comments.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// The `event:` field; empty when the server sent none.
    pub event: String,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
}

/// Incremental parser; keep one per response body.
#[derive(Debug, Default)]
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
}

impl SseParser {
    /// Feeds the next piece of the body; complete events go to `out`.
    pub fn push(&mut self, mut bytes: &[u8], out: &mut Vec<SseEvent>) {
        if !self.started && !bytes.is_empty() {
            self.started = true;
            if let Some(rest) = bytes.strip_prefix(b"\xEF\xBB\xBF".as_slice()) {
                bytes = rest;
            }
        }
        for &byte in bytes {
            match byte {
                b'\n' if self.after_cr => self.after_cr = false,
                b'\n' | b'\r' => {
                    self.after_cr = byte == b'\r';
                    let line = std::mem::take(&mut self.line);
                    self.on_line(&line, out);
                }
                _ => {
                    self.after_cr = false;
                    self.line.push(byte);
                }
            }
        }
    }

    /// Ends the body: a last line without its newline, and a last event
    /// without its blank line, are still delivered (servers do end so).
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.on_line(&line, out);
        }
        self.on_line(b"", out);
    }

    fn on_line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            if self.has_data {
                out.push(SseEvent {
                    event: std::mem::take(&mut self.event),
                    data: std::mem::take(&mut self.data),
                });
            }
            self.event.clear();
            self.data.clear();
            self.has_data = false;
            return;
        }
        if line[0] == b':' {
            return;
        }
        let line = String::from_utf8_lossy(line);
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_ref(), ""),
        };
        match field {
            "event" => self.event = value.to_string(),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            _ => {} // id, retry: a single response has no use for them
        }
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
            parser.push(chunk, &mut out);
        }
        parser.finish(&mut out);
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
    fn events_without_data_are_not_dispatched() {
        assert_eq!(parse_in_pieces(b"event: ping\n\n\n\nid: 3\n\n", 4), vec![]);
        assert_eq!(parse_in_pieces(b"data:\n\n", 4), vec![ev("", "")]);
    }
}
