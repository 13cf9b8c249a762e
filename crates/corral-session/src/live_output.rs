//! A command's output as it is streamed live: decoded to text chunk by
//! chunk without breaking a character, and cut off after a limit. The app
//! streams it to the window, and a remote project's session over ssh.

use corral_tools::shell::Stream;

/// Most bytes of one run's output streamed live (to the window, or over
/// ssh from a remote project's session); the result keeps the head and
/// tail of each stream whatever was streamed. 100 MB of output must not
/// become 100 MB of strings in the webview.
pub const LIVE_OUTPUT_LIMIT: usize = 8 * 1024 * 1024;

/// One run's live output: decoded per stream, cut after [`LIVE_OUTPUT_LIMIT`]
/// with one last chunk saying so.
#[derive(Debug, Default)]
pub struct LiveOutput {
    decoders: [Utf8Stream; 2],
    sent: usize,
    stopped: bool,
}

impl LiveOutput {
    /// The text to send for `bytes` of `stream`, if any.
    pub fn next(&mut self, stream: Stream, bytes: &[u8]) -> Option<String> {
        if self.stopped {
            return None;
        }
        if self.sent + bytes.len() > LIVE_OUTPUT_LIMIT {
            self.stopped = true;
            let data = format!(
                "\n[live output stopped after {} MiB; the result keeps the first and last {} KiB of each stream]\n",
                LIVE_OUTPUT_LIMIT / (1024 * 1024),
                corral_tools::shell::HEAD_BYTES / 1024
            );
            return Some(data);
        }
        self.sent += bytes.len();
        let data = self.decoders[matches!(stream, Stream::Stderr) as usize].push(bytes);
        (!data.is_empty()).then_some(data)
    }
}

/// Decodes a byte stream chunk by chunk without breaking a UTF-8 character
/// split between two chunks (invalid bytes still become U+FFFD).
#[derive(Debug, Default)]
pub struct Utf8Stream {
    pending: Vec<u8>,
}

impl Utf8Stream {
    /// The text of `bytes`, holding back an incomplete character at the end.
    pub fn push(&mut self, bytes: &[u8]) -> String {
        self.pending.extend_from_slice(bytes);
        let keep = incomplete_tail(&self.pending);
        let ready: Vec<u8> = self.pending.drain(..self.pending.len() - keep).collect();
        String::from_utf8_lossy(&ready).into_owned()
    }
}

/// How many bytes at the end start a UTF-8 character that is not complete yet.
fn incomplete_tail(bytes: &[u8]) -> usize {
    for back in 1..=bytes.len().min(3) {
        let byte = bytes[bytes.len() - back];
        if byte & 0b1100_0000 != 0b1000_0000 {
            let needed = match byte {
                0xC0..=0xDF => 2,
                0xE0..=0xEF => 3,
                0xF0..=0xF7 => 4,
                _ => 1,
            };
            return if needed > back { back } else { 0 };
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn characters_split_between_chunks_stay_whole() {
        let text = "héllo 🦀 wörld";
        let bytes = text.as_bytes();
        for split in 0..bytes.len() {
            let mut decoder = Utf8Stream::default();
            let joined = decoder.push(&bytes[..split]) + &decoder.push(&bytes[split..]);
            assert_eq!(joined, text, "split at {split}");
        }
        // One byte at a time too.
        let mut decoder = Utf8Stream::default();
        let joined: String = bytes.iter().map(|b| decoder.push(&[*b])).collect();
        assert_eq!(joined, text);
    }

    #[test]
    fn the_live_output_stops_at_its_limit_with_one_last_chunk() {
        let mut live = LiveOutput::default();
        let block = vec![b'x'; 1024 * 1024];
        let mut sent = 0;
        let mut last = String::new();
        while let Some(data) = live.next(Stream::Stdout, &block) {
            sent += data.len();
            last = data;
        }
        assert!(last.contains("live output stopped"), "{last}");
        assert!(sent <= LIVE_OUTPUT_LIMIT + last.len());
        assert_eq!(live.next(Stream::Stderr, b"more"), None);
    }

    #[test]
    fn invalid_bytes_still_come_through_as_replacement() {
        let mut decoder = Utf8Stream::default();
        assert_eq!(decoder.push(b"a\xffb"), "a\u{FFFD}b");
    }
}
