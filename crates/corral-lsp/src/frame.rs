//! Reading a server's messages with every size bounded before anything is
//! allocated for it. A server is the project's code (the TypeScript
//! server runs the project's own `node_modules/typescript`), so its
//! `Content-Length` is not trusted: lsp-server's own reader allocates
//! whatever it announces, and `Content-Length: 99999999999999` aborted
//! the whole process.

use lsp_server::Message;
use std::io::{BufRead, Read};

/// The largest message a server may send (diagnostics of a huge file are
/// a few MiB).
pub(crate) const MAX_MESSAGE: u64 = 64 << 20;
/// The longest header line, and how many lines a header may have.
const MAX_HEADER_LINE: u64 = 8 << 10;
const MAX_HEADER_LINES: usize = 32;

/// The next message, `None` at the end of the stream, or why the framing
/// is broken (the caller drops the server).
pub(crate) fn read(reader: &mut impl BufRead) -> Result<Option<Message>, String> {
    let mut length: Option<u64> = None;
    let mut lines = 0;
    loop {
        let mut line = Vec::new();
        let read = reader
            .by_ref()
            .take(MAX_HEADER_LINE + 1)
            .read_until(b'\n', &mut line)
            .map_err(|e| format!("could not read its output: {e}"))?;
        if read == 0 {
            return if lines == 0 {
                Ok(None)
            } else {
                Err("its output ended inside a message's header".into())
            };
        }
        if !line.ends_with(b"\n") {
            return Err(if read as u64 > MAX_HEADER_LINE {
                format!("it sent a header line over {MAX_HEADER_LINE} bytes")
            } else {
                "its output ended inside a message's header".into()
            });
        }
        lines += 1;
        if lines > MAX_HEADER_LINES {
            return Err(format!("it sent a header of over {MAX_HEADER_LINES} lines"));
        }
        let line = String::from_utf8_lossy(&line);
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            break;
        }
        let Some((name, value)) = line.split_once(':') else {
            return Err(format!(
                "it sent a header line that is not `Name: value`: {line:.80}"
            ));
        };
        if name.trim().eq_ignore_ascii_case("content-length") {
            let value = value.trim();
            let parsed = value.parse::<u64>().map_err(|_| {
                format!("it sent a Content-Length that is not a number: {value:.40}")
            })?;
            length = Some(parsed);
        }
    }
    let Some(length) = length else {
        return Err("it sent a message with no Content-Length".into());
    };
    if length > MAX_MESSAGE {
        return Err(format!(
            "it announced a message of {length} bytes, over the {} MiB a message may have",
            MAX_MESSAGE >> 20
        ));
    }
    // Grown as the bytes arrive, never from the announced length alone.
    let mut body = Vec::new();
    reader
        .by_ref()
        .take(length)
        .read_to_end(&mut body)
        .map_err(|e| format!("could not read its output: {e}"))?;
    if (body.len() as u64) < length {
        return Err("its output ended inside a message".into());
    }
    serde_json::from_slice(&body)
        .map(Some)
        .map_err(|e| format!("it sent a message that is not JSON-RPC: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn framed(body: &str) -> Vec<u8> {
        format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
    }

    #[test]
    fn messages_are_read_one_after_another() {
        let mut bytes = framed(r#"{"jsonrpc":"2.0","id":1,"result":null}"#);
        bytes.extend(framed(r#"{"jsonrpc":"2.0","method":"x","params":{}}"#));
        let mut reader = Cursor::new(bytes);
        assert!(matches!(read(&mut reader), Ok(Some(Message::Response(_)))));
        assert!(matches!(
            read(&mut reader),
            Ok(Some(Message::Notification(_)))
        ));
        assert!(matches!(read(&mut reader), Ok(None)));
    }

    /// Each lie is refused before anything of its size is allocated.
    #[test]
    fn a_lying_or_endless_frame_is_refused() {
        let endless_line = vec![b'A'; 100_000];
        let many_lines = "X-A: 1\r\n".repeat(40) + "\r\n";
        for (bytes, said) in [
            (
                b"Content-Length: 99999999999999\r\n\r\n{}".to_vec(),
                "announced a message of 99999999999999",
            ),
            (
                b"Content-Length: 18446744073709551616\r\n\r\n".to_vec(),
                "not a number",
            ),
            (endless_line, "header line over"),
            (many_lines.into_bytes(), "over 32 lines"),
            (b"Content-Type: x\r\n\r\n{}".to_vec(), "no Content-Length"),
            (
                b"Content-Length: 10\r\n\r\n{}".to_vec(),
                "ended inside a message",
            ),
            (b"Content-Length: 2\r\n\r\n[]".to_vec(), "not JSON-RPC"),
        ] {
            let e = read(&mut Cursor::new(bytes)).unwrap_err();
            assert!(e.contains(said), "{e}");
        }
    }
}
