//! The index file: what was indexed (each file's path and stat fingerprint)
//! and, for each trigram, the files that contain it.
//!
//! One file per project, written whole to a temporary name and renamed into
//! place, so a reader sees an old index or a new one, never half of one:
//!
//! ```text
//! header   magic "CORRALX1", then (offset, length) of the three sections,
//!          the files section's FNV-1a hash, and the header's own hash
//! files    build time, the root's path, then the files sorted by path:
//!          path, size, mtime, ctime, inode, flags
//! grams    an `fst` map: trigram (3 bytes) -> offset in the postings
//! postings per trigram: length, FNV-1a hash, a serialized roaring bitmap
//!          of file numbers
//! ```
//!
//! Reading takes the header, the files and the `fst` (checked with its own
//! checksum), and then only the posting lists a query names, each checked
//! against its hash. Anything that does not check out is an error: the
//! caller rebuilds, it never trusts a damaged index. (No memory map: the
//! workspace denies `unsafe`; `pread` of the few sections is enough.)

use super::plan::{gram, indexed_window, Query};
use crate::walk;
use corral_fs::root::ProjectRoot;
use corral_fs::secret::is_secret_like;
use fst::{Map, MapBuilder};
use roaring::RoaringBitmap;
use std::collections::{BTreeMap, HashMap};
use std::fs::{File, Metadata};
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
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

const MAGIC: &[u8; 8] = b"CORRALX1";
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

    // Trigrams, one share of the files per thread.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let results: Vec<(HashMap<u32, RoaringBitmap>, Vec<u32>)> = std::thread::scope(|scope| {
        let entries = &entries;
        let workers: Vec<_> = (0..threads)
            .map(|t| scope.spawn(move || index_share(root, entries, t, threads, progress)))
            .collect();
        workers.into_iter().filter_map(|w| w.join().ok()).collect()
    });
    if results.len() != threads {
        return Err(Broken("an indexing thread failed".into()));
    }
    let mut postings: BTreeMap<u32, RoaringBitmap> = BTreeMap::new();
    for (share, direct) in results {
        for (g, bits) in share {
            *postings.entry(g).or_default() |= bits;
        }
        for id in direct {
            if let Some(e) = entries.get_mut(id as usize) {
                e.flags |= DIRECT;
            }
        }
    }
    write(root, path, started, &entries, &postings)
}

/// Trigrams of the files `t`, `t + n`, `t + 2n`...; and the files found to
/// need a direct search (unreadable, UTF-16).
fn index_share(
    root: &ProjectRoot,
    entries: &[Entry],
    t: usize,
    n: usize,
    progress: &BuildProgress,
) -> (HashMap<u32, RoaringBitmap>, Vec<u32>) {
    let mut map: HashMap<u32, RoaringBitmap> = HashMap::new();
    let mut direct = Vec::new();
    let mut seen = vec![0u64; (1 << 24) / 64];
    let mut grams: Vec<u32> = Vec::new();
    let mut buf = Vec::new();
    for (id, entry) in entries.iter().enumerate().skip(t).step_by(n) {
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
        for w in text.windows(3) {
            if !indexed_window(w) {
                continue;
            }
            let g = gram(w[0], w[1], w[2]);
            let (word, bit) = ((g >> 6) as usize, 1u64 << (g & 63));
            if let Some(slot) = seen.get_mut(word) {
                if *slot & bit == 0 {
                    *slot |= bit;
                    grams.push(g);
                }
            }
        }
        for &g in &grams {
            if let Some(slot) = seen.get_mut((g >> 6) as usize) {
                *slot = 0;
            }
            map.entry(g).or_default().insert(id);
        }
    }
    (map, direct)
}

fn write(
    root: &ProjectRoot,
    path: &Path,
    started: i64,
    entries: &[Entry],
    postings: &BTreeMap<u32, RoaringBitmap>,
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

    let mut post = Vec::new();
    let mut dict = MapBuilder::memory();
    for (g, bits) in postings {
        let mut bytes = Vec::with_capacity(bits.serialized_size());
        bits.serialize_into(&mut bytes)?;
        let key = [(g >> 16) as u8, (g >> 8) as u8, *g as u8];
        dict.insert(key, post.len() as u64)?;
        post.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        post.extend_from_slice(&fnv(&bytes).to_le_bytes());
        post.extend_from_slice(&bytes);
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
        fnv(&files),
        dict_at,
        dict.len() as u64,
        post_at,
        post.len() as u64,
    ] {
        header.extend_from_slice(&v.to_le_bytes());
    }
    let own = fnv(&header);
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
        out.write_all(&post)?;
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

/// FNV-1a, 64 bits: catches damage, not attacks (the index folder is the
/// user's own).
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
        if c.u64()? != fnv(&header[..HEADER - 8]) {
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
        if fnv(&raw) != files_hash {
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
        if !c.0.is_empty() || files.windows(2).any(|w| w[0].path >= w[1].path) {
            return Err(Broken("damaged file list".into()));
        }
        let grams = Map::new(read_at(&file, dict_at, dict_len)?)?;
        grams.as_fst().verify()?;
        Ok(Index {
            file,
            files,
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
        Ok(match query {
            Query::All => None,
            Query::Nothing => Some(RoaringBitmap::new()),
            Query::Gram(g) => Some(self.posting(*g)?),
            Query::And(parts) => {
                let mut acc: Option<RoaringBitmap> = None;
                for part in parts {
                    if let Some(bits) = self.candidates(part)? {
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
                    match self.candidates(part)? {
                        Some(bits) => acc |= bits,
                        None => return Ok(None),
                    }
                }
                Some(acc)
            }
        })
    }

    fn posting(&self, g: u32) -> Res<RoaringBitmap> {
        let key = [(g >> 16) as u8, (g >> 8) as u8, g as u8];
        let Some(at) = self.grams.get(key) else {
            return Ok(RoaringBitmap::new());
        };
        let (base, len) = self.postings;
        if at.checked_add(16).is_none_or(|end| end > len) {
            return Err(Broken("a posting outside its section".into()));
        }
        let head = read_at(&self.file, base + at, 16)?;
        let mut c = Cursor(&head);
        let (size, hash) = (c.u64()?, c.u64()?);
        if (at + 16).checked_add(size).is_none_or(|end| end > len) {
            return Err(Broken("a posting outside its section".into()));
        }
        let bytes = read_at(&self.file, base + at + 16, size)?;
        if fnv(&bytes) != hash {
            return Err(Broken("damaged posting".into()));
        }
        let bits = RoaringBitmap::deserialize_from(bytes.as_slice())?;
        if bits.max().is_some_and(|m| m as usize >= self.files.len()) {
            return Err(Broken("a posting names no file".into()));
        }
        Ok(bits)
    }
}
