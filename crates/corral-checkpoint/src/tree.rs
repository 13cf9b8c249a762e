//! One tree object per folder: its entries (name, kind, mode, size, the
//! blob's or subtree's hash, or a link's target), sorted by name. A folder
//! whose entries did not change encodes to the same bytes, so it has the
//! same hash and is stored once for every snapshot that shares it.

use super::object::{corrupt, Hash};
use corral_fs::error::Result;

/// What one entry of a folder is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A regular file kept in the store.
    File { mode: u32, size: u64, hash: Hash },
    /// A regular file over the size limit: recorded, not kept.
    Large { mode: u32, size: u64 },
    /// A symbolic link and its target, as bytes (never followed).
    Symlink { target: Vec<u8> },
    /// A folder and its tree.
    Dir { mode: u32, hash: Hash },
    /// An entry the ignore rules leave out (or a folder that could not be
    /// read): it existed, nothing of it is kept, and a restore leaves it be.
    Ignored,
}

/// One named entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub name: Vec<u8>,
    pub kind: Kind,
}

/// A folder's entries, sorted by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Tree {
    pub entries: Vec<Entry>,
}

const MAGIC: &[u8] = b"corral-tree-1\n";

impl Tree {
    /// Sorts the entries, so that equal folders encode equally.
    pub fn new(mut entries: Vec<Entry>) -> Tree {
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        Tree { entries }
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(MAGIC.len() + self.entries.len() * 64);
        out.extend_from_slice(MAGIC);
        for entry in &self.entries {
            let tag = match &entry.kind {
                Kind::File { .. } => b'f',
                Kind::Large { .. } => b'l',
                Kind::Symlink { .. } => b's',
                Kind::Dir { .. } => b'd',
                Kind::Ignored => b'i',
            };
            out.push(tag);
            put_bytes(&mut out, &entry.name);
            match &entry.kind {
                Kind::File { mode, size, hash } => {
                    out.extend_from_slice(&mode.to_le_bytes());
                    out.extend_from_slice(&size.to_le_bytes());
                    out.extend_from_slice(hash.as_bytes());
                }
                Kind::Large { mode, size } => {
                    out.extend_from_slice(&mode.to_le_bytes());
                    out.extend_from_slice(&size.to_le_bytes());
                }
                Kind::Symlink { target } => put_bytes(&mut out, target),
                Kind::Dir { mode, hash } => {
                    out.extend_from_slice(&mode.to_le_bytes());
                    out.extend_from_slice(hash.as_bytes());
                }
                Kind::Ignored => {}
            }
        }
        out
    }

    pub fn decode(bytes: &[u8]) -> Result<Tree> {
        let mut r = Reader { bytes, at: 0 };
        if r.take(MAGIC.len())? != MAGIC {
            return Err(corrupt("a tree object has an unknown format"));
        }
        let mut entries = Vec::new();
        while r.at < bytes.len() {
            let tag = r.take(1)?[0];
            let name = r.bytes()?.to_vec();
            let kind = match tag {
                b'f' => Kind::File {
                    mode: r.u32()?,
                    size: r.u64()?,
                    hash: r.hash()?,
                },
                b'l' => Kind::Large {
                    mode: r.u32()?,
                    size: r.u64()?,
                },
                b's' => Kind::Symlink {
                    target: r.bytes()?.to_vec(),
                },
                b'd' => Kind::Dir {
                    mode: r.u32()?,
                    hash: r.hash()?,
                },
                b'i' => Kind::Ignored,
                _ => return Err(corrupt("a tree object has an unknown entry")),
            };
            if name.is_empty() || name.contains(&b'/') || name == b"." || name == b".." {
                return Err(corrupt("a tree object has an invalid name"));
            }
            entries.push(Entry { name, kind });
        }
        Ok(Tree { entries })
    }
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self
            .at
            .checked_add(n)
            .filter(|end| *end <= self.bytes.len())
            .ok_or_else(|| corrupt("a tree object is cut short"))?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }
    fn u32(&mut self) -> Result<u32> {
        let mut b = [0u8; 4];
        b.copy_from_slice(self.take(4)?);
        Ok(u32::from_le_bytes(b))
    }
    fn u64(&mut self) -> Result<u64> {
        let mut b = [0u8; 8];
        b.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(b))
    }
    fn hash(&mut self) -> Result<Hash> {
        let mut b = [0u8; 32];
        b.copy_from_slice(self.take(32)?);
        Ok(Hash(b))
    }
    fn bytes(&mut self) -> Result<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn trees_round_trip_and_cut_trees_are_errors() {
        let tree = Tree::new(vec![
            Entry {
                name: b"z".to_vec(),
                kind: Kind::Dir {
                    mode: 0o755,
                    hash: Hash::of(b"x"),
                },
            },
            Entry {
                name: b"a".to_vec(),
                kind: Kind::File {
                    mode: 0o644,
                    size: 3,
                    hash: Hash::of(b"abc"),
                },
            },
            Entry {
                name: b"big".to_vec(),
                kind: Kind::Large {
                    mode: 0o600,
                    size: 1 << 40,
                },
            },
            Entry {
                name: b"link".to_vec(),
                kind: Kind::Symlink {
                    target: b"/etc/passwd".to_vec(),
                },
            },
            Entry {
                name: b"target".to_vec(),
                kind: Kind::Ignored,
            },
        ]);
        let bytes = tree.encode();
        assert_eq!(Tree::decode(&bytes).unwrap(), tree);
        assert_eq!(tree.entries[0].name, b"a");
        // A cut object never decodes to something else: an error, or (cut
        // between entries) fewer entries. The store checks every object's
        // hash before decoding it, so neither is ever taken for the tree.
        for cut in 0..bytes.len() {
            if let Ok(short) = Tree::decode(&bytes[..cut]) {
                assert!(short.entries.len() < tree.entries.len());
                assert_eq!(short.entries[..], tree.entries[..short.entries.len()]);
            }
        }
        assert!(Tree::decode(&bytes[..MAGIC.len() + 3]).is_err());
    }
}
