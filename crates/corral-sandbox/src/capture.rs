//! Bounded capture of one output stream: the first [`HEAD_BYTES`] and the
//! last [`TAIL_BYTES`] are kept, the middle is counted and dropped. Memory
//! stays at about 128 KiB per stream whatever the program prints.

use std::collections::VecDeque;

/// Bytes kept from the start of a stream.
pub const HEAD_BYTES: usize = 64 * 1024;
/// Bytes kept from the end of a stream.
pub const TAIL_BYTES: usize = 64 * 1024;

/// Head, ring-buffered tail and the count of bytes dropped between them.
#[derive(Debug, Default)]
pub(crate) struct Capture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    dropped: u64,
}

/// A finished capture as text.
#[derive(Debug, Clone, Default)]
pub(crate) struct Captured {
    /// Lossy UTF-8, with a marker where the middle was dropped.
    pub text: String,
    /// Bytes dropped from the middle.
    pub dropped: u64,
}

impl Capture {
    /// Appends a chunk.
    pub(crate) fn push(&mut self, mut chunk: &[u8]) {
        if self.head.len() < HEAD_BYTES {
            let take = chunk.len().min(HEAD_BYTES - self.head.len());
            self.head.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
        }
        if chunk.len() >= TAIL_BYTES {
            // The whole ring is replaced: everything in it and the front of
            // this chunk fall into the dropped middle.
            self.dropped += (self.tail.len() + chunk.len() - TAIL_BYTES) as u64;
            self.tail.clear();
            self.tail.extend(&chunk[chunk.len() - TAIL_BYTES..]);
            return;
        }
        self.tail.extend(chunk);
        let over = self.tail.len().saturating_sub(TAIL_BYTES);
        if over > 0 {
            self.tail.drain(..over);
            self.dropped += over as u64;
        }
    }

    /// The text: head, a marker if bytes were dropped, tail.
    pub(crate) fn finish(&self) -> Captured {
        let mut bytes = self.head.clone();
        if self.dropped > 0 {
            let marker = format!(
                "\n[... {} bytes omitted by corral: the first {} KiB and the last {} KiB are kept ...]\n",
                self.dropped,
                HEAD_BYTES / 1024,
                TAIL_BYTES / 1024
            );
            bytes.extend_from_slice(marker.as_bytes());
        }
        let (a, b) = self.tail.as_slices();
        bytes.extend_from_slice(a);
        bytes.extend_from_slice(b);
        Captured {
            text: String::from_utf8_lossy(&bytes).into_owned(),
            dropped: self.dropped,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_output_is_kept_whole() {
        let mut c = Capture::default();
        c.push(b"hello ");
        c.push(b"world");
        let out = c.finish();
        assert_eq!(out.text, "hello world");
        assert_eq!(out.dropped, 0);
    }

    #[test]
    fn exactly_head_plus_tail_drops_nothing() {
        let mut c = Capture::default();
        c.push(&vec![b'a'; HEAD_BYTES + TAIL_BYTES]);
        let out = c.finish();
        assert_eq!(out.dropped, 0);
        assert_eq!(out.text.len(), HEAD_BYTES + TAIL_BYTES);
    }

    #[test]
    fn middle_is_dropped_and_counted_in_any_chunking() {
        let total = HEAD_BYTES + TAIL_BYTES + 1000;
        let data: Vec<u8> = (0..total).map(|i| b'a' + (i % 26) as u8).collect();
        for chunk in [1, 7, 4096, TAIL_BYTES, TAIL_BYTES + 3, total] {
            let mut c = Capture::default();
            for piece in data.chunks(chunk) {
                c.push(piece);
            }
            let out = c.finish();
            assert_eq!(out.dropped, 1000, "chunk {chunk}");
            assert!(out
                .text
                .starts_with(std::str::from_utf8(&data[..HEAD_BYTES]).unwrap_or("")));
            assert!(out
                .text
                .ends_with(std::str::from_utf8(&data[total - TAIL_BYTES..]).unwrap_or("")));
            assert!(out.text.contains("1000 bytes omitted"));
        }
    }
}
