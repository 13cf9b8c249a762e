//! The index file: what was indexed (each file's path and stat fingerprint)
//! and, for each trigram, the files that contain it.
//!
//! One file per project, written whole to a temporary name and renamed into
//! place, so a reader sees an old index or a new one, never half of one:
//!
//! ```text
//! header   magic "CORRALX2", then (offset, length) of the three sections,
//!          the files section's hash, and the header's own hash
//! files    build time, the root's path, then the files sorted by path:
//!          path, size, mtime, ctime, inode, flags
//! grams    an `fst` map: trigram (3 bytes) -> offset in the postings
//! postings per trigram: the bitmap's length, its hash, the masks' hash,
//!          a serialized roaring bitmap of file numbers, then two masks per
//!          file of the bitmap, in its order: where the trigram starts
//!          (bit `offset % 8` for each occurrence) and which bytes follow
//!          it (a one-hash bloom of 8 bits, [`next_bit`])
//! ```
//!
//! The masks let a phrase's trigrams be checked for lying next to each
//! other, as Cursor's "fast regex search" does: a file holding `abcd` has
//! `abc` at some offset p and `bcd` at p + 1, so `abc`'s starts shifted by
//! one meet `bcd`'s, and `abc`'s followers include `d`. A file that holds
//! every trigram of a phrase, but never in a row, is mostly ruled out.
//!
//! Reading takes the header, the files and the `fst` (checked with its own
//! checksum), and then only the posting lists a query names (their masks
//! only for phrases), each checked against its hash. Anything that does not check out is an error: the
//! caller rebuilds, it never trusts a damaged index. (No memory map: the
//! workspace denies `unsafe`; `pread` of the few sections is enough.)

use super::plan::{gram, indexed_window, next_bit, phrase_grams, Query};
use crate::walk;
use corral_fs::root::ProjectRoot;
use corral_fs::secret::is_secret_like;
use fst::{Map, MapBuilder};
use roaring::RoaringBitmap;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::fs::{File, Metadata};
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::AtomicUsize;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How far a build has come: files listed by the walk, files read for
/// their trigrams.
#[derive(Debug, Default)]
pub struct BuildProgress {
    pub listed: AtomicUsize,
    pub indexed: AtomicUsize,
}

/// The format's version is its last byte: an index of another version is
/// not read, but rebuilt.
const MAGIC: &[u8; 8] = b"CORRALX3";
/// A file larger than two blocks is indexed as blocks of about this size
/// (see [`Blocks`]).
const BLOCK: u64 = 64 << 10;
const HEADER: usize = 8 + 8 * 8;
/// Files larger than this are not indexed: a query searches them directly.
const MAX_INDEXED_SIZE: u64 = 16 << 20;
/// Flag: search this file directly (changed too recently to trust its
/// fingerprint, too large, or UTF-16 that the searcher transcodes).
const DIRECT: u8 = 1;

/// Why an index could not be used.
#[derive(Debug)]
pub(crate) struct Broken(pub String);

impl<E: std::fmt::Display> From<E> for Broken {
    fn from(e: E) -> Self {
        Broken(e.to_string())
    }
}

type Res<T> = std::result::Result<T, Broken>;

/// What a file looked like when it was indexed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    size: u64,
    mtime: i64,
    ctime: i64,
    ino: u64,
}

impl Stamp {
    pub(crate) fn of(md: &Metadata) -> Stamp {
        Stamp {
            size: md.size(),
            mtime: md.mtime().saturating_mul(1_000_000_000) + md.mtime_nsec(),
            ctime: md.ctime().saturating_mul(1_000_000_000) + md.ctime_nsec(),
            ino: md.ino(),
        }
    }
}

struct Entry {
    path: Vec<u8>,
    stamp: Stamp,
    flags: u8,
}

/// An index opened for queries.
pub(crate) struct Index {
    file: File,
    files: Vec<Entry>,
    /// The file of each block (document `files.len() + i`).
    blocks: Vec<u32>,
    grams: Map<Vec<u8>>,
    postings: (u64, u64),
}

/// The index file of a project inside `dir`: named by a hash of the root's
/// path, so one folder can hold the indexes of many projects.
pub(crate) fn location(dir: &Path, root: &ProjectRoot) -> PathBuf {
    let name = format!("{:016x}.idx", fnv(root.path().as_os_str().as_bytes()));
    dir.join(name)
}

fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

/// Builds the index of the whole root and writes it to `path`. Files whose
/// stat changed less than `settle` before the build are marked to be
/// searched directly: a later write within the same clock tick could leave
/// their fingerprint unchanged.
pub(crate) fn build(
    root: &ProjectRoot,
    path: &Path,
    settle: Duration,
    progress: &BuildProgress,
) -> Res<()> {
    let started = now_ns();
    let trusted_before = started.saturating_sub(i64::try_from(settle.as_nanos()).unwrap_or(0));

    // The same walk and rules as a search, from the root.
    let found: Mutex<Vec<(Vec<u8>, Stamp)>> = Mutex::new(Vec::new());
    walk::walker(root.path()).build_parallel().run(|| {
        let found = &found;
        Box::new(move |entry| {
            let Ok(entry) = entry else {
                return ignore::WalkState::Continue;
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return ignore::WalkState::Continue;
            }
            let Some(rel) = walk::relative(root, entry.path()) else {
                return ignore::WalkState::Continue;
            };
            // Secrets stay out of the index (a search skips them anyway).
            if is_secret_like(&rel.to_string_lossy()) {
                return ignore::WalkState::Continue;
            }
            if let Ok(md) = entry.metadata() {
                progress
                    .listed
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let item = (rel.as_os_str().as_bytes().to_vec(), Stamp::of(&md));
                found
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .push(item);
            }
            ignore::WalkState::Continue
        })
    });
    let mut files = found
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    files.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    files.dedup_by(|a, b| a.0 == b.0);
    let mut entries: Vec<Entry> = files
        .into_iter()
        .map(|(path, stamp)| {
            let recent = stamp.mtime >= trusted_before || stamp.ctime >= trusted_before;
            let direct = recent || stamp.size > MAX_INDEXED_SIZE;
            Entry {
                path,
                stamp,
                flags: if direct { DIRECT } else { 0 },
            }
        })
        .collect();

    let blocks = Blocks::of(&entries)?;

    // Trigrams, one run of files per thread, the runs of about equal
    // bytes: each thread's postings are in file order (and block order),
    // and the runs' postings are joined end to end, files then blocks.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let runs = split_by_size(&entries, threads);
    let results: Vec<(Share, Vec<u32>)> = std::thread::scope(|scope| {
        let (entries, blocks) = (&entries, &blocks);
        let workers: Vec<_> = runs
            .iter()
            .map(|run| {
                let run = run.clone();
                scope.spawn(move || index_share(root, entries, blocks, run, progress))
            })
            .collect();
        workers.into_iter().filter_map(|w| w.join().ok()).collect()
    });
    if results.len() != runs.len() {
        return Err(Broken("an indexing thread failed".into()));
    }
    let mut postings: BTreeMap<u32, [Posting; 2]> = BTreeMap::new();
    for (share, direct) in results {
        for (g, parts) in share {
            let whole = postings.entry(g).or_default();
            for (whole, part) in whole.iter_mut().zip(parts) {
                whole.bits |= part.bits;
                if whole.masks.is_empty() {
                    whole.masks = part.masks;
                } else {
                    whole.masks.extend_from_slice(&part.masks);
                }
            }
        }
        for id in direct {
            if let Some(e) = entries.get_mut(id as usize) {
                e.flags |= DIRECT;
            }
        }
    }
    // Each trigram's files then blocks: one bitmap, the masks written
    // one after the other (not copied into one).
    for [files, blocks] in postings.values_mut() {
        files.bits |= std::mem::take(&mut blocks.bits);
    }
    write(root, path, started, &entries, &blocks.owner, &postings)
}

/// A large file is indexed as blocks of lines, each a document of its own
/// numbered after all the files: its trigrams' masks then say where in
/// the file, not only whether, and a query rules out a large file none of
/// whose blocks holds its phrase. Matches are within one line, and every
/// line belongs to one block (the block its start falls in: `start /
/// BLOCK`, at most the last), so a block holds all of a matching line's
/// trigrams.
struct Blocks {
    /// The file of each block.
    owner: Vec<u32>,
    /// Per file: its first block's number (a document number) and how
    /// many blocks it has (0: indexed whole).
    first: Vec<(u32, u32)>,
}

impl Blocks {
    fn of(entries: &[Entry]) -> Res<Blocks> {
        let files = u32::try_from(entries.len())?;
        let mut owner = Vec::new();
        let mut first = Vec::with_capacity(entries.len());
        for (id, e) in entries.iter().enumerate() {
            if e.flags & DIRECT != 0 || e.stamp.size <= 2 * BLOCK {
                first.push((0, 0));
                continue;
            }
            let n = u32::try_from(e.stamp.size.div_ceil(BLOCK))?;
            let at = files
                .checked_add(u32::try_from(owner.len())?)
                .ok_or_else(|| Broken("too many blocks".into()))?;
            first.push((at, n));
            owner.extend(std::iter::repeat_n(u32::try_from(id)?, n as usize));
        }
        Ok(Blocks { owner, first })
    }
}

/// One trigram's files, and two masks for each (see the module's notes).
#[derive(Default)]
struct Posting {
    bits: RoaringBitmap,
    /// Per file of `bits`, in order: where the trigram starts, what follows.
    masks: Vec<u8>,
}

/// A thread's postings: of whole files, and of blocks.
type Share = HashMap<u32, [Posting; 2]>;

/// `n` runs of consecutive files, of about the same total size each.
fn split_by_size(entries: &[Entry], n: usize) -> Vec<std::ops::Range<usize>> {
    let size = |e: &Entry| {
        if e.flags & DIRECT != 0 {
            0
        } else {
            e.stamp.size + 256
        }
    };
    let total: u64 = entries.iter().map(size).sum();
    let share = total / n.max(1) as u64 + 1;
    let mut runs = Vec::with_capacity(n);
    let (mut start, mut sum) = (0, 0);
    for (i, e) in entries.iter().enumerate() {
        sum += size(e);
        if sum >= share && runs.len() + 1 < n {
            runs.push(start..i + 1);
            start = i + 1;
            sum = 0;
        }
    }
    runs.push(start..entries.len());
    runs
}

/// Trigrams of the files in `run`, with their masks; and the files found
/// to need a direct search (unreadable, UTF-16).
fn index_share(
    root: &ProjectRoot,
    entries: &[Entry],
    blocks: &Blocks,
    run: std::ops::Range<usize>,
    progress: &BuildProgress,
) -> (Share, Vec<u32>) {
    let mut map: Share = HashMap::new();
    let mut direct = Vec::new();
    // Per trigram of the file being read: its start mask, and its
    // followers' mask above it (0: not seen yet in this file).
    let mut seen = vec![0u16; 1 << 24];
    let mut grams: Vec<u32> = Vec::new();
    let mut buf = Vec::new();
    for (id, entry) in entries.iter().enumerate().skip(run.start).take(run.len()) {
        progress
            .indexed
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let Ok(id) = u32::try_from(id) else {
            break;
        };
        if entry.flags & DIRECT != 0 {
            continue;
        }
        buf.clear();
        let rel = Path::new(std::ffi::OsStr::from_bytes(&entry.path));
        let read = walk::open_regular(root, rel)
            .ok_or(())
            .and_then(|mut f| f.read_to_end(&mut buf).map_err(|_| ()));
        // The searcher transcodes UTF-16 (by its BOM): search it directly.
        if read.is_err() || buf.starts_with(&[0xFF, 0xFE]) || buf.starts_with(&[0xFE, 0xFF]) {
            direct.push(id);
            continue;
        }
        // The searcher stops at the first NUL (a binary file): what follows
        // it is never matched, so it is not indexed either.
        let text = buf
            .iter()
            .position(|&b| b == 0)
            .map_or(buf.as_slice(), |nul| &buf[..nul]);
        grams.clear();
        // A large file: the block of the current line.
        let (first, count) = blocks.first.get(id as usize).copied().unwrap_or((0, 0));
        let mut block = 0u32;
        let mut line_start = 0usize;
        for (at, w) in text.windows(3).enumerate() {
            if count > 0 {
                if at > 0 && text.get(at - 1) == Some(&b'\n') {
                    line_start = at;
                }
                let now = u32::try_from(line_start as u64 / BLOCK)
                    .unwrap_or(u32::MAX)
                    .min(count - 1);
                if now != block {
                    flush(&mut map, &mut seen, &grams, 1, first + block);
                    grams.clear();
                    block = now;
                }
            }
            if !indexed_window(w) {
                continue;
            }
            let g = gram(w[0], w[1], w[2]);
            let next = text.get(at + 3).map_or(0, |&b| next_bit(b));
            let mark = 1u16 << (at % 8) | u16::from(next) << 8;
            if let Some(slot) = seen.get_mut(g as usize) {
                if *slot == 0 {
                    grams.push(g);
                }
                *slot |= mark;
            }
        }
        if count > 0 {
            flush(&mut map, &mut seen, &grams, 1, first + block);
        } else {
            flush(&mut map, &mut seen, &grams, 0, id);
        }
    }
    (map, direct)
}

/// Adds document `doc` (of `part`: 0 files, 1 blocks) to the postings of
/// `grams` with their masks from `seen`, and clears those.
fn flush(map: &mut Share, seen: &mut [u16], grams: &[u32], part: usize, doc: u32) {
    for &g in grams {
        let Some(slot) = seen.get_mut(g as usize) else {
            continue;
        };
        let Some(posting) = map.entry(g).or_default().get_mut(part) else {
            continue;
        };
        // Documents come in order: each is pushed at the bitmap's end (a
        // push out of order would be refused, its masks with it).
        if posting.bits.push(doc) {
            posting
                .masks
                .extend_from_slice(&[*slot as u8, (*slot >> 8) as u8]);
        }
        *slot = 0;
    }
}

fn write(
    root: &ProjectRoot,
    path: &Path,
    started: i64,
    entries: &[Entry],
    blocks: &[u32],
    postings: &BTreeMap<u32, [Posting; 2]>,
) -> Res<()> {
    let mut files = Vec::new();
    files.extend_from_slice(&started.to_le_bytes());
    put_bytes(&mut files, root.path().as_os_str().as_bytes());
    files.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    for e in entries {
        put_bytes(&mut files, &e.path);
        for v in [
            e.stamp.size,
            e.stamp.mtime as u64,
            e.stamp.ctime as u64,
            e.stamp.ino,
        ] {
            files.extend_from_slice(&v.to_le_bytes());
        }
        files.push(e.flags);
    }
    files.extend_from_slice(&(blocks.len() as u64).to_le_bytes());
    for &owner in blocks {
        files.extend_from_slice(&owner.to_le_bytes());
    }

    // The postings are written straight to the file (they are most of
    // it); their offsets come first, from their sizes.
    let mut dict = MapBuilder::memory();
    let mut post_len = 0u64;
    for (g, [files, blocks]) in postings {
        let masks = files.masks.len() as u64 + blocks.masks.len() as u64;
        if masks != 2 * files.bits.len() {
            return Err(Broken("masks out of step with their files".into()));
        }
        let key = [(g >> 16) as u8, (g >> 8) as u8, *g as u8];
        dict.insert(key, post_len)?;
        post_len += 24 + files.bits.serialized_size() as u64 + masks;
    }
    let dict = dict.into_inner()?;

    let files_at = HEADER as u64;
    let dict_at = files_at + files.len() as u64;
    let post_at = dict_at + dict.len() as u64;
    let mut header = Vec::with_capacity(HEADER);
    header.extend_from_slice(MAGIC);
    for v in [
        files_at,
        files.len() as u64,
        check(&files),
        dict_at,
        dict.len() as u64,
        post_at,
        post_len,
    ] {
        header.extend_from_slice(&v.to_le_bytes());
    }
    let own = check(&header);
    header.extend_from_slice(&own.to_le_bytes());

    let (dir, name) = index_dir(path)?;
    // A name of its own for each build, made exclusively: two builds of one
    // index (the app's and a query's rebuild) never write one file.
    static BUILDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let build = BUILDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = format!(".{name}.{}.{build}.tmp", std::process::id());
    let written = (|| -> Res<()> {
        let mut options = cap_std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        let mut out = std::io::BufWriter::new(dir.open_with(&tmp, &options)?.into_std());
        out.write_all(&header)?;
        out.write_all(&files)?;
        out.write_all(&dict)?;
        let mut bytes = Vec::new();
        for [files, blocks] in postings.values() {
            bytes.clear();
            files.bits.serialize_into(&mut bytes)?;
            out.write_all(&(bytes.len() as u64).to_le_bytes())?;
            out.write_all(&check(&bytes).to_le_bytes())?;
            out.write_all(&check_parts(&[&files.masks, &blocks.masks]).to_le_bytes())?;
            out.write_all(&bytes)?;
            out.write_all(&files.masks)?;
            out.write_all(&blocks.masks)?;
        }
        out.flush()?;
        dir.rename(&tmp, &dir, &name)?;
        Ok(())
    })();
    if written.is_err() {
        let _ = dir.remove_file(&tmp);
    }
    written
}

/// The folder holding the index (created when missing), as a handle, and
/// the index's name in it. The folder is the caller's, outside the project:
/// it is not a project path, but is still only touched through its handle.
fn index_dir(path: &Path) -> Res<(cap_std::fs::Dir, String)> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| Broken("no index file name".into()))?;
    std::fs::DirBuilder::new().recursive(true).create(dir)?;
    let dir = cap_std::fs::Dir::open_ambient_dir(dir, cap_std::ambient_authority())?;
    Ok((dir, name))
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// A checksum of a section or posting, eight bytes at a step: catches
/// damage, not attacks (the index folder is the user's own). Each step is
/// a bijection of the state, so a change in any one word always shows.
fn check(bytes: &[u8]) -> u64 {
    check_parts(&[bytes])
}

/// [`check`] of the parts one after the other, without joining them.
fn check_parts(parts: &[&[u8]]) -> u64 {
    let step = |h: u64, word: [u8; 8]| {
        (h ^ u64::from_le_bytes(word))
            .wrapping_mul(0x0100_0000_01b3)
            .rotate_left(23)
    };
    let len: usize = parts.iter().map(|p| p.len()).sum();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ len as u64;
    // A word begun at the end of one part, finished by the next.
    let (mut word, mut n) = ([0u8; 8], 0);
    for part in parts {
        let mut rest = *part;
        while n > 0 {
            let Some((&b, tail)) = rest.split_first() else {
                break;
            };
            word[n] = b;
            n += 1;
            rest = tail;
            if n == 8 {
                h = step(h, word);
                n = 0;
            }
        }
        let mut words = rest.chunks_exact(8);
        for w in &mut words {
            let mut full = [0u8; 8];
            full.copy_from_slice(w);
            h = step(h, full);
        }
        for &b in words.remainder() {
            word[n] = b;
            n += 1;
        }
    }
    for &b in &word[..n] {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// FNV-1a, 64 bits, for the index's file name.
fn fnv(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Reads little-endian values off a byte slice; any overrun is `Broken`.
struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn u64(&mut self) -> Res<u64> {
        let (head, rest) = self
            .0
            .split_first_chunk::<8>()
            .ok_or_else(|| Broken("truncated".into()))?;
        self.0 = rest;
        Ok(u64::from_le_bytes(*head))
    }

    fn bytes(&mut self, n: u64) -> Res<&'a [u8]> {
        let n = usize::try_from(n)?;
        if n > self.0.len() {
            return Err(Broken("truncated".into()));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
}

fn read_at(file: &File, at: u64, len: u64) -> Res<Vec<u8>> {
    let mut buf = vec![0; usize::try_from(len)?];
    file.read_exact_at(&mut buf, at)?;
    Ok(buf)
}

impl Index {
    /// Opens and checks the index of `root` at `path`.
    pub(crate) fn open(root: &ProjectRoot, path: &Path) -> Res<Index> {
        let (dir, name) = index_dir(path)?;
        let file = dir.open(&name)?.into_std();
        let total = file.metadata()?.len();
        let header = read_at(&file, 0, HEADER as u64)?;
        if &header[..8] != MAGIC {
            return Err(Broken("not an index of this version".into()));
        }
        let mut c = Cursor(&header[8..]);
        let (files_at, files_len, files_hash) = (c.u64()?, c.u64()?, c.u64()?);
        let (dict_at, dict_len, post_at, post_len) = (c.u64()?, c.u64()?, c.u64()?, c.u64()?);
        if c.u64()? != check(&header[..HEADER - 8]) {
            return Err(Broken("damaged header".into()));
        }
        let end = post_at.checked_add(post_len);
        if files_at.checked_add(files_len) != Some(dict_at)
            || dict_at.checked_add(dict_len) != Some(post_at)
            || end != Some(total)
        {
            return Err(Broken("sections do not add up".into()));
        }
        let raw = read_at(&file, files_at, files_len)?;
        if check(&raw) != files_hash {
            return Err(Broken("damaged file list".into()));
        }
        let mut c = Cursor(&raw);
        let _built = c.u64()?;
        let len = c.u64()?;
        if c.bytes(len)? != root.path().as_os_str().as_bytes() {
            return Err(Broken("the index of another folder".into()));
        }
        let count = c.u64()?;
        let mut files = Vec::with_capacity(usize::try_from(count.min(1 << 24))?);
        for _ in 0..count {
            let len = c.u64()?;
            let path = c.bytes(len)?.to_vec();
            let (size, mtime, ctime, ino) = (c.u64()?, c.u64()?, c.u64()?, c.u64()?);
            let flags = *c.bytes(1)?.first().unwrap_or(&DIRECT);
            files.push(Entry {
                path,
                stamp: Stamp {
                    size,
                    mtime: mtime as i64,
                    ctime: ctime as i64,
                    ino,
                },
                flags,
            });
        }
        let count = c.u64()?;
        let mut blocks = Vec::with_capacity(usize::try_from(count.min(1 << 24))?);
        for _ in 0..count {
            let mut owner = [0u8; 4];
            owner.copy_from_slice(c.bytes(4)?);
            blocks.push(u32::from_le_bytes(owner));
        }
        if !c.0.is_empty()
            || files.windows(2).any(|w| w[0].path >= w[1].path)
            || blocks.windows(2).any(|w| w[0] > w[1])
            || blocks.last().is_some_and(|&b| b as usize >= files.len())
        {
            return Err(Broken("damaged file list".into()));
        }
        let grams = Map::new(read_at(&file, dict_at, dict_len)?)?;
        grams.as_fst().verify()?;
        Ok(Index {
            file,
            files,
            blocks,
            grams,
            postings: (post_at, post_len),
        })
    }

    /// How many files were indexed.
    pub(crate) fn len(&self) -> usize {
        self.files.len()
    }

    /// The path (relative to the root) of file number `id`.
    pub(crate) fn path(&self, id: u32) -> Option<&[u8]> {
        self.files.get(id as usize).map(|e| e.path.as_slice())
    }

    /// The files a query always searches directly (changed just before the
    /// build, or too large to index).
    pub(crate) fn direct(&self) -> impl Iterator<Item = u32> + '_ {
        self.files
            .iter()
            .enumerate()
            .filter(|(_, e)| e.flags & DIRECT != 0)
            .filter_map(|(id, _)| u32::try_from(id).ok())
    }

    /// The file number of `rel` if it is indexed, unchanged since (same
    /// stamp) and not to be searched directly.
    pub(crate) fn trusted(&self, rel: &[u8], now: &Stamp) -> Option<u32> {
        let at = self
            .files
            .binary_search_by(|e| e.path.as_slice().cmp(rel))
            .ok()?;
        let entry = self.files.get(at)?;
        if entry.flags & DIRECT != 0 || entry.stamp != *now {
            return None;
        }
        u32::try_from(at).ok()
    }

    /// The files that can match `query`; `None` for all of them.
    pub(crate) fn candidates(&self, query: &Query) -> Res<Option<RoaringBitmap>> {
        let docs = Lookup {
            index: self,
            read: RefCell::new(HashMap::new()),
        }
        .candidates(query, None)?;
        // Blocks stand for their files.
        let files = u32::try_from(self.files.len())?;
        Ok(docs.map(|mut docs| {
            let blocks: Vec<u32> = docs.range(files..).collect();
            docs.remove_range(files..);
            for b in blocks {
                if let Some(&owner) = self.blocks.get((b - files) as usize) {
                    docs.insert(owner);
                }
            }
            docs
        }))
    }

    /// The bitmap of trigram `g` (empty if no file has it), and where its
    /// masks are.
    fn posting(&self, g: u32) -> Res<Loaded> {
        let key = [(g >> 16) as u8, (g >> 8) as u8, g as u8];
        let Some(at) = self.grams.get(key) else {
            return Ok(Loaded::default());
        };
        let (base, len) = self.postings;
        if at.checked_add(24).is_none_or(|end| end > len) {
            return Err(Broken("a posting outside its section".into()));
        }
        let head = read_at(&self.file, base + at, 24)?;
        let mut c = Cursor(&head);
        let (size, hash, masks_hash) = (c.u64()?, c.u64()?, c.u64()?);
        if (at + 24).checked_add(size).is_none_or(|end| end > len) {
            return Err(Broken("a posting outside its section".into()));
        }
        let bytes = read_at(&self.file, base + at + 24, size)?;
        if check(&bytes) != hash {
            return Err(Broken("damaged posting".into()));
        }
        let bits = RoaringBitmap::deserialize_from(bytes.as_slice())?;
        if bits
            .max()
            .is_some_and(|m| m as usize >= self.files.len() + self.blocks.len())
        {
            return Err(Broken("a posting names no file".into()));
        }
        let masks_at = at + 24 + size;
        if masks_at
            .checked_add(2 * bits.len())
            .is_none_or(|end| end > len)
        {
            return Err(Broken("a posting outside its section".into()));
        }
        Ok(Loaded {
            bits,
            masks_at: base + masks_at,
            masks_hash,
            masks: None,
        })
    }
}

/// A posting as read for a query: its masks are read only for phrases.
#[derive(Default)]
struct Loaded {
    bits: RoaringBitmap,
    masks_at: u64,
    masks_hash: u64,
    masks: Option<Vec<u8>>,
}

/// One query's reads, each posting read once.
struct Lookup<'a> {
    index: &'a Index,
    read: RefCell<HashMap<u32, Rc<RefCell<Loaded>>>>,
}

impl Lookup<'_> {
    fn posting(&self, g: u32) -> Res<Rc<RefCell<Loaded>>> {
        if let Some(read) = self.read.borrow().get(&g) {
            return Ok(read.clone());
        }
        let read = Rc::new(RefCell::new(self.index.posting(g)?));
        self.read.borrow_mut().insert(g, read.clone());
        Ok(read)
    }

    /// The files that can match `query` among `within` (all when `None`);
    /// `None` for all of them.
    fn candidates(
        &self,
        query: &Query,
        within: Option<&RoaringBitmap>,
    ) -> Res<Option<RoaringBitmap>> {
        Ok(match query {
            Query::All => None,
            Query::Nothing => Some(RoaringBitmap::new()),
            Query::Gram(g) => Some(self.posting(*g)?.borrow().bits.clone()),
            Query::Phrase(phrase) => Some(self.phrase(phrase, within)?),
            Query::And(parts) => {
                let mut acc: Option<RoaringBitmap> = within.cloned();
                for part in parts {
                    if let Some(bits) = self.candidates(part, acc.as_ref())? {
                        acc = Some(match acc {
                            Some(a) => a & bits,
                            None => bits,
                        });
                        if acc.as_ref().is_some_and(RoaringBitmap::is_empty) {
                            break;
                        }
                    }
                }
                acc
            }
            Query::Or(parts) => {
                let mut acc = RoaringBitmap::new();
                for part in parts {
                    match self.candidates(part, within)? {
                        Some(bits) => acc |= bits,
                        None => return Ok(None),
                    }
                }
                Some(acc)
            }
        })
    }

    /// The files (among `within`) holding every trigram of `phrase` with
    /// masks that allow them in a row: the trigram at offset i of the
    /// phrase starts where the first one does, plus i, and is followed by
    /// the phrase's byte after it. A file that holds the phrase at p has
    /// bit `(p + i) % 8` in trigram i's starts and that byte's bit in its
    /// followers, so it is never ruled out.
    fn phrase(&self, phrase: &[u8], within: Option<&RoaringBitmap>) -> Res<RoaringBitmap> {
        let grams: Vec<u32> = phrase_grams(phrase).collect();
        let mut reads = Vec::with_capacity(grams.len());
        for &g in &grams {
            reads.push(self.posting(g)?);
        }
        // The files holding them all, smallest posting first.
        let mut order: Vec<usize> = (0..reads.len()).collect();
        order.sort_by_key(|&i| reads[i].borrow().bits.len());
        let mut acc = within.cloned();
        for &i in &order {
            let read = reads[i].borrow();
            acc = Some(match acc {
                Some(a) => a & &read.bits,
                None => read.bits.clone(),
            });
            if acc.as_ref().is_some_and(RoaringBitmap::is_empty) {
                break;
            }
        }
        let Some(acc) = acc else {
            return Ok(RoaringBitmap::new());
        };
        if acc.is_empty() || grams.len() < 2 {
            return Ok(acc);
        }
        // Then their masks, the rarest trigram first: `starts[j]` keeps the
        // offsets (mod 8) where the phrase could start in file `ids[j]`.
        let mut ids: Vec<u32> = acc.iter().collect();
        let mut starts = vec![u8::MAX; ids.len()];
        for &i in &order {
            self.load_masks(&mut reads[i].borrow_mut())?;
            let read = reads[i].borrow();
            let masks = read.masks.as_deref().unwrap_or_default();
            let bits = &read.bits;
            let follower = phrase.get(i + 3).map_or(0, |&b| next_bit(b));
            let shift = (i % 8) as u32;
            let mut at = |j: usize, rank: u64| -> Res<()> {
                let r = usize::try_from(rank)?;
                let (Some(&loc), Some(&next)) = (masks.get(2 * r), masks.get(2 * r + 1)) else {
                    return Err(Broken("masks out of step with their files".into()));
                };
                let mut s = starts[j] & loc.rotate_right(shift);
                if next & follower != follower {
                    s = 0;
                }
                starts[j] = s;
                Ok(())
            };
            if ids.len() * 64 < bits.len() as usize {
                for (j, &id) in ids.iter().enumerate() {
                    at(j, bits.rank(id).saturating_sub(1))?;
                }
            } else {
                let mut j = 0;
                for (rank, id) in bits.iter().enumerate() {
                    let Some(&want) = ids.get(j) else {
                        break;
                    };
                    if id == want {
                        at(j, rank as u64)?;
                        j += 1;
                    }
                }
            }
            // Drop the files ruled out, so later trigrams look at fewer.
            let mut keep = 0;
            for j in 0..ids.len() {
                if starts[j] != 0 {
                    ids[keep] = ids[j];
                    starts[keep] = starts[j];
                    keep += 1;
                }
            }
            ids.truncate(keep);
            starts.truncate(keep);
            if ids.is_empty() {
                break;
            }
        }
        Ok(RoaringBitmap::from_sorted_iter(ids).unwrap_or_default())
    }

    /// The masks of a posting, read and checked on first use.
    fn load_masks(&self, read: &mut Loaded) -> Res<()> {
        if read.masks.is_none() {
            let masks = read_at(&self.index.file, read.masks_at, 2 * read.bits.len())?;
            if check(&masks) != read.masks_hash {
                return Err(Broken("damaged posting".into()));
            }
            read.masks = Some(masks);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::disallowed_methods)]
    use super::super::plan::plan;
    use super::*;
    use crate::{SearchFilesInput, SearchFilesOutput};
    use std::collections::BTreeSet;

    /// A project holding `files` and its index (in a folder of its own).
    fn indexed(files: &[(String, Vec<u8>)]) -> (tempfile::TempDir, ProjectRoot, Index, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        std::fs::create_dir(&project).unwrap();
        for (name, bytes) in files {
            std::fs::write(project.join(name), bytes).unwrap();
        }
        let root = ProjectRoot::open(&project).unwrap();
        let path = dir.path().join("index/x.idx");
        build(&root, &path, Duration::ZERO, &BuildProgress::default()).unwrap();
        let index = Index::open(&root, &path).unwrap();
        (dir, root, index, path)
    }

    fn input(query: &str, regex: bool, case_insensitive: bool) -> SearchFilesInput {
        SearchFilesInput {
            query: query.into(),
            regex: Some(regex),
            case_insensitive: Some(case_insensitive),
            glob: None,
            path: None,
            max_results: Some(1000),
        }
    }

    /// The files the plain search finds a match in.
    fn matching(root: &ProjectRoot, input: &SearchFilesInput) -> BTreeSet<String> {
        let out: SearchFilesOutput = crate::search_files(root, input).unwrap();
        assert!(!out.truncated);
        out.matches.into_iter().map(|m| m.path).collect()
    }

    /// The files the index cannot rule out (or searches directly).
    fn allowed(index: &Index, input: &SearchFilesInput) -> Option<BTreeSet<String>> {
        let query = plan(
            &input.query,
            input.regex.unwrap_or(true),
            input.case_insensitive.unwrap_or(false),
        )?;
        let mut bits = index.candidates(&query).unwrap()?;
        bits.extend(index.direct());
        Some(
            bits.iter()
                .map(|id| String::from_utf8(index.path(id).unwrap().to_vec()).unwrap())
                .collect(),
        )
    }

    /// Every file the plain search matches is allowed by the index.
    fn never_drops(root: &ProjectRoot, index: &Index, input: &SearchFilesInput) {
        let found = matching(root, input);
        if let Some(allowed) = allowed(index, input) {
            let dropped: Vec<_> = found.difference(&allowed).collect();
            assert!(dropped.is_empty(), "{:?} dropped {dropped:?}", input.query);
        }
    }

    fn file(name: &str, text: &str) -> (String, Vec<u8>) {
        (name.to_string(), text.as_bytes().to_vec())
    }

    #[test]
    fn a_phrase_is_found_at_every_offset_and_a_scattered_one_is_ruled_out() {
        let mut files: Vec<_> = (0..17)
            .map(|pad| {
                let text = format!("{}deprecated since 1.2\n", "x".repeat(pad));
                file(&format!("at{pad:02}.rs"), &text)
            })
            .collect();
        // Every trigram of the phrase, never in a row.
        files.push(file(
            "scattered.rs",
            "#[deprecated(since = \"1\")]\nfn f() {} // used d sin ced ed \n",
        ));
        files.push(file("start.txt", "deprecated since"));
        files.push(file("end.txt", "line one\nit was Deprecated Since"));
        files.push(file("crlf.txt", "a\r\ndeprecated since\r\n"));
        let (_dir, root, index, _) = indexed(&files);
        for ci in [false, true] {
            let q = input("deprecated since", false, ci);
            never_drops(&root, &index, &q);
            let allowed = allowed(&index, &q).unwrap();
            assert!(!allowed.contains("scattered.rs"), "{allowed:?}");
            // Trigrams are case-folded: the index cannot tell cases apart.
            assert!(allowed.contains("end.txt"), "{allowed:?}");
        }
        assert_eq!(
            matching(&root, &input("deprecated since", false, true)).len(),
            20
        );
    }

    #[test]
    fn case_folding_alternations_and_multibyte_text_keep_their_matches() {
        let files = vec![
            file("a.txt", "the naïve café\n"),
            file("b.txt", "THE NAÏVE CAFÉ\n"),
            file("c.txt", "\u{017F}ince when\n"),
            file("d.txt", "a \u{212A}elvin sign\n"),
            file("e.rs", "fn from_utf8_lossy(x)\nfn bar_qux(y)\n"),
            file("f.rs", "let baz_qux(z)\n"),
            file("g.bin", "deprecated since\0and more since\n"),
            file("h.txt", "ÿÿÿdeprecated since ÿ\n"),
            file("i.txt", "abcabcabcabcabcabcabcabcabd\n"),
        ];
        let (_dir, root, index, _) = indexed(&files);
        let queries = [
            ("naïve café", false, false),
            ("NAÏVE CAFÉ", false, true),
            ("since when", false, true),
            ("kelvin sign", false, true),
            (r"fn [a-z_]+_utf8_lossy\(", true, false),
            (r"(bar|baz)_qux\(", true, false),
            (r"(foo_bar|baz_qux)\(", true, false),
            ("deprecated since", false, false),
            ("ÿdeprecated", false, true),
            ("abcabd", false, false),
            ("cabcabcab", false, false),
            (r"abc(abc)+abd", true, false),
            (r"^fn from", true, false),
            (r"^let baz", true, false),
        ];
        for (q, regex, ci) in queries {
            let q = input(q, regex, ci);
            assert!(!matching(&root, &q).is_empty(), "{:?}", q.query);
            never_drops(&root, &index, &q);
        }
    }

    /// A small xorshift, for the same random texts on every run.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    #[test]
    fn random_texts_and_phrases_never_lose_a_match() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        // A few letters, so trigrams repeat and masks fill up, as in large
        // files; a line break, a multi-byte letter and both cases.
        let alphabet = ["a", "b", "c", "A", " ", "\n", "é", "d"];
        let files: Vec<_> = (0..60)
            .map(|i| {
                let len = 1 + rng.below(if i % 3 == 0 { 400 } else { 40 });
                let text: String = (0..len)
                    .map(|_| alphabet[rng.below(alphabet.len())])
                    .collect();
                file(&format!("f{i:02}.txt"), &text)
            })
            .collect();
        let (_dir, root, index, _) = indexed(&files);
        let mut pruned = 0;
        for _ in 0..300 {
            // A piece of one of the files, so it matches somewhere.
            let (_, bytes) = &files[rng.below(files.len())];
            let text = std::str::from_utf8(bytes).unwrap();
            let chars: Vec<char> = text.chars().collect();
            let len = 4 + rng.below(6);
            if chars.len() <= len {
                continue;
            }
            let at = rng.below(chars.len() - len);
            let piece: String = chars[at..at + len].iter().collect();
            let piece = piece
                .split('\n')
                .max_by_key(|p| p.len())
                .unwrap_or_default();
            if piece.len() < 4 {
                continue;
            }
            let ci = rng.below(2) == 0;
            let q = input(piece, false, ci);
            never_drops(&root, &index, &q);
            let (found, allowed) = (matching(&root, &q), allowed(&index, &q).unwrap());
            pruned += allowed.len() - found.len();
        }
        // Not a promise, only that the test exercised something.
        let _ = pruned;
    }

    #[test]
    fn a_large_file_is_ruled_out_by_its_blocks_and_never_loses_a_line() {
        let filler = |n: usize| "filler text of no interest\n".repeat(n);
        let block = BLOCK as usize;
        // Every trigram of the phrase, each block holding only some.
        let scattered = format!("{}deprecated\n{}since\n", filler(6000), filler(6000));
        // The phrase in a line that starts just before a block's end and
        // runs into the next one; then in a line longer than a block; then
        // as the file's last bytes.
        let mut straddling = "x".repeat(block - 10);
        straddling.push('\n');
        straddling.push_str(&format!(
            "{}deprecated since\n{}",
            "y".repeat(5),
            filler(3000)
        ));
        let mut long = filler(3000);
        long.push_str(&"z".repeat(2 * block));
        long.push_str("deprecated since");
        long.push_str(&"z".repeat(block));
        long.push('\n');
        let mut end = filler(9000);
        end.push_str("Deprecated Since");
        let files = vec![
            file("scattered.txt", &scattered),
            file("straddling.txt", &straddling),
            file("long.txt", &long),
            file("end.txt", &end),
        ];
        let (_dir, root, index, _) = indexed(&files);
        assert!(!index.blocks.is_empty());
        let q = input("deprecated since", false, true);
        never_drops(&root, &index, &q);
        assert_eq!(matching(&root, &q).len(), 3);
        let allowed = allowed(&index, &q).unwrap();
        assert!(!allowed.contains("scattered.txt"), "{allowed:?}");
        for q in [
            input(r"ted (since|later)", true, false),
            input(r"(deprecated|since)$", true, false),
            input("xxxxxxxxxx", false, false),
            input(r"y+deprecated", true, false),
        ] {
            never_drops(&root, &index, &q);
        }
    }

    #[test]
    fn random_large_files_never_lose_a_match() {
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        let words = ["ab", "abc", "bca", "Cab", "é", " ", " ", "dd", "a\n", "\n"];
        let files: Vec<_> = (0..4)
            .map(|i| {
                let mut text = String::new();
                while text.len() < 150_000 + i * 40_000 {
                    // Now and then a line far longer than a block.
                    let n = if rng.below(50) == 0 { 40_000 } else { 1 };
                    for _ in 0..n {
                        let w = words[rng.below(words.len())];
                        text.push_str(if n > 1 { w.trim_end() } else { w });
                    }
                }
                file(&format!("big{i}.txt"), &text)
            })
            .collect();
        let (_dir, root, index, _) = indexed(&files);
        assert!(index.blocks.len() >= 8);
        for _ in 0..150 {
            let (_, bytes) = &files[rng.below(files.len())];
            let at = rng.below(bytes.len() - 12);
            let Some(piece) = std::str::from_utf8(&bytes[at..at + 4 + rng.below(8)]).ok() else {
                continue;
            };
            let piece = piece
                .split('\n')
                .max_by_key(|p| p.len())
                .unwrap_or_default();
            if piece.len() < 4 {
                continue;
            }
            never_drops(&root, &index, &input(piece, false, rng.below(2) == 0));
        }
    }

    #[test]
    fn an_index_of_the_previous_format_is_rebuilt_not_read() {
        let files = vec![
            file("a.txt", "deprecated since 1.0\n"),
            file("b.txt", "other\n"),
        ];
        let (dir, root, _index, _) = indexed(&files);
        let config = crate::IndexConfig {
            settle: Duration::ZERO,
            ..crate::IndexConfig::new(dir.path().join("store"))
        };
        let path = location(&config.dir, &root);
        let q = input("deprecated since", false, false);
        crate::search_files_indexed(&root, &q, &config).unwrap();
        // Indexes of the earlier formats: their own magic.
        for old in [b"CORRALX1", b"CORRALX2"] {
            let mut bytes = std::fs::read(&path).unwrap();
            bytes[..8].copy_from_slice(old);
            std::fs::write(&path, &bytes).unwrap();
            let err = Index::open(&root, &path).err().unwrap();
            assert!(err.0.contains("version"), "{}", err.0);
            let out = crate::search_files_indexed(&root, &q, &config).unwrap();
            assert!(out.indexed);
            assert_eq!(out.matches.len(), 1);
            assert_eq!(&std::fs::read(&path).unwrap()[..8], MAGIC);
        }
    }

    #[test]
    fn a_checksum_of_parts_is_that_of_the_whole() {
        let bytes: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        for cut in [0, 1, 5, 7, 8, 9, 15, 16, 17, 999, 1000] {
            for cut2 in [cut, (cut + 3).min(1000), 1000] {
                let (a, rest) = bytes.split_at(cut);
                let (b, c) = rest.split_at(cut2 - cut);
                assert_eq!(check_parts(&[a, b, c]), check(&bytes), "{cut} {cut2}");
            }
        }
        assert_ne!(check(&bytes[..999]), check(&bytes));
    }

    #[test]
    fn damaged_masks_are_found_out() {
        let files = vec![file("a.txt", "deprecated since 1.0\n")];
        let (_dir, root, index, path) = indexed(&files);
        let all = Query::Phrase(b"deprecated since 1.0".to_vec());
        assert_eq!(index.candidates(&all).unwrap().unwrap().len(), 1);
        // The file ends with the masks of the last trigram, `ted`.
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0x40;
        std::fs::write(&path, &bytes).unwrap();
        let index = Index::open(&root, &path).unwrap();
        assert!(index
            .candidates(&Query::Gram(gram(b't', b'e', b'd')))
            .is_ok());
        assert!(index.candidates(&all).is_err());
    }
}
