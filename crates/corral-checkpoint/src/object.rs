//! Content-addressed objects: `objects/ab/cdef…`, named by the blake3 hash
//! of their bytes. Written to `tmp/` and renamed into place, so a killed
//! write leaves at most a temp file (swept at the next open), never a
//! half-written object under a real name. Reads check the hash.

use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt};
use corral_fs::error::{Error, ErrorCode, Result};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

/// A blake3 hash.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Hash(pub [u8; 32]);

impl Hash {
    pub fn of(bytes: &[u8]) -> Hash {
        Hash(*blake3::hash(bytes).as_bytes())
    }

    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    pub fn hex(&self) -> String {
        let mut out = String::with_capacity(64);
        for b in self.0 {
            out.push_str(&format!("{b:02x}"));
        }
        out
    }

    pub fn from_hex(text: &str) -> Option<Hash> {
        if text.len() != 64 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let mut out = [0u8; 32];
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&text[i * 2..i * 2 + 2], 16).ok()?;
        }
        Some(Hash(out))
    }
}

impl std::fmt::Debug for Hash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.hex()[..12])
    }
}

/// Where an object lives, relative to the store.
pub(crate) fn object_path(hash: &Hash) -> PathBuf {
    let hex = hash.hex();
    PathBuf::from("objects").join(&hex[..2]).join(&hex[2..])
}

/// Whether the object is there, whole (its length is known to the caller:
/// a file of another length is not it).
pub(crate) fn has(store: &Dir, hash: &Hash, len: u64) -> bool {
    store
        .symlink_metadata(object_path(hash))
        .is_ok_and(|m| m.is_file() && m.len() == len)
}

/// Writes an object unless it is there. Returns the bytes written (0 when
/// it was there). The temp file is not synced here: the caller syncs the
/// store once before a snapshot names the object.
pub(crate) fn put(store: &Dir, hash: &Hash, bytes: &[u8]) -> Result<u64> {
    if has(store, hash, bytes.len() as u64) {
        return Ok(0);
    }
    let path = object_path(hash);
    let fan = path.parent().map(PathBuf::from).unwrap_or_default();
    match store.create_dir(&fan) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(store_io(&e, "create an object folder")),
    }
    let tmp = write_temp(store, bytes)?;
    store
        .rename(&tmp, store, &path)
        .map_err(|e| store_io(&e, "store an object"))?;
    Ok(bytes.len() as u64)
}

/// A new file in `tmp/` holding `bytes`, private to the user.
pub(crate) fn write_temp(store: &Dir, bytes: &[u8]) -> Result<PathBuf> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut options = OpenOptions::new();
    options.write(true).create_new(true).mode(0o600);
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = PathBuf::from("tmp").join(format!("{}-{n}", std::process::id()));
        let mut file = match store.open_with(&tmp, &options) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(store_io(&e, "write a temp file")),
        };
        file.write_all(bytes)
            .map_err(|e| store_io(&e, "write a temp file"))?;
        return Ok(tmp);
    }
}

/// Reads an object and checks it is what its name says.
pub(crate) fn get(store: &Dir, hash: &Hash) -> Result<Vec<u8>> {
    let mut file = store.open(object_path(hash)).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            corrupt(&format!("object {} is missing", hash.hex()))
        } else {
            store_io(&e, "read an object")
        }
    })?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| store_io(&e, "read an object"))?;
    if Hash::of(&bytes) != *hash {
        return Err(corrupt(&format!(
            "object {} does not match its hash",
            hash.hex()
        )));
    }
    Ok(bytes)
}

/// A readable descriptor on the folder `name` beneath `dir` (`.` for
/// `dir` itself), never through a symlink in any component (`O_NOFOLLOW`
/// alone guards only the last): cap-std's handles are `O_PATH`, which
/// `fsync`, `syncfs`, `fchmod` and `getdents` refuse.
pub(crate) fn folder_fd(dir: &Dir, name: &std::path::Path) -> std::io::Result<rustix::fd::OwnedFd> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{Mode, OFlags, ResolveFlags};
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS;
        match rustix::fs::openat2(dir, name, flags, Mode::empty(), resolve) {
            // A kernel before 5.6, or a filter that refuses the call: one
            // component at a time instead.
            Err(rustix::io::Errno::NOSYS | rustix::io::Errno::PERM) => {}
            opened => return opened.map_err(std::io::Error::from),
        }
    }
    folder_fd_stepwise(dir, name)
}

/// [`folder_fd`] one component at a time, each opened without following
/// a symlink.
pub(crate) fn folder_fd_stepwise(
    dir: &Dir,
    name: &std::path::Path,
) -> std::io::Result<rustix::fd::OwnedFd> {
    use rustix::fd::AsFd;
    use rustix::fs::{Mode, OFlags};
    use std::path::Component;
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut folder: Option<rustix::fd::OwnedFd> = None;
    for part in name.components() {
        let part = match part {
            Component::Normal(part) => part,
            Component::CurDir => continue,
            _ => return Err(std::io::Error::from(rustix::io::Errno::XDEV)),
        };
        let at = folder.as_ref().map_or(dir.as_fd(), |fd| fd.as_fd());
        folder = Some(rustix::fs::openat(at, part, flags, Mode::empty())?);
    }
    match folder {
        Some(fd) => Ok(fd),
        None => Ok(rustix::fs::openat(dir, ".", flags, Mode::empty())?),
    }
}

/// A store whose content does not check out.
pub(crate) fn corrupt(message: &str) -> Error {
    Error::new(
        ErrorCode::Io,
        format!("the checkpoint store is damaged: {message}"),
    )
    .hint("Checkpoints taken before the damage may be lost; new ones are taken as usual.")
}

/// Flushes the file system that holds `fd` to disk: `syncfs` on Linux
/// (one call for everything written), else an `fsync` of the folder.
pub(crate) fn sync_filesystem(fd: &rustix::fd::OwnedFd) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    let synced = rustix::fs::syncfs(fd);
    #[cfg(not(target_os = "linux"))]
    let synced = rustix::fs::fsync(fd);
    synced.map_err(std::io::Error::from)
}

/// An I/O error of the store itself (not of the project).
pub(crate) fn store_io(e: &std::io::Error, doing: &str) -> Error {
    Error::new(
        ErrorCode::Io,
        format!("the checkpoint store could not {doing}: {e}"),
    )
    .hint("Check that the disk has space and the data folder is writable.")
}
