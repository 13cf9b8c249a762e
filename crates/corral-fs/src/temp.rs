//! Corral's own temp files in the project: a write, or a restore, puts its
//! bytes in `.NAME.corral-PID-N-X.tmp` beside `NAME` and renames it into
//! place. A process killed before the rename leaves one behind; the next
//! call into that folder removes those whose process is gone, and a
//! checkpoint never records one.

use cap_std::fs::Dir;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicU64, Ordering};

const MARK: &[u8] = b".corral-";
const SUFFIX: &[u8] = b".tmp";

/// A fresh temp name beside `name`: `.NAME.corral-PID-N-X.tmp` (a
/// process-wide counter and the clock's nanoseconds: a name a killed
/// process left is not taken again).
pub fn name_for(name: &OsStr) -> OsString {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let mut tmp = OsString::from(".");
    tmp.push(name);
    tmp.push(format!(".corral-{}-{n}-{nanos:x}.tmp", std::process::id()));
    tmp
}

/// The process that made a temp file of ours, from its name; `None` for
/// any other name.
pub(crate) fn owner(name: &[u8]) -> Option<u32> {
    let body = name.strip_prefix(b".")?.strip_suffix(SUFFIX)?;
    let at = body.windows(MARK.len()).rposition(|w| w == MARK)?;
    if at == 0 {
        return None;
    }
    let mut parts = body[at + MARK.len()..].split(|b| *b == b'-');
    let (pid, n, x) = (parts.next()?, parts.next()?, parts.next()?);
    let digits = |p: &[u8]| !p.is_empty() && p.iter().all(u8::is_ascii_digit);
    if parts.next().is_some() || !digits(pid) || !digits(n) {
        return None;
    }
    if x.is_empty() || !x.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    std::str::from_utf8(pid).ok()?.parse().ok()
}

/// Whether `name` is a temp file of Corral's (a checkpoint leaves it out).
pub fn is_ours(name: &[u8]) -> bool {
    owner(name).is_some()
}

/// Whether the process `pid` is gone. Our own is never gone; one that
/// exists but is another user's is not gone either.
fn is_gone(pid: u32) -> bool {
    if pid == std::process::id() {
        return false;
    }
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    matches!(
        rustix::process::test_kill_process(pid),
        Err(rustix::io::Errno::SRCH)
    )
}

/// Removes from `dir` the temp files of processes that are gone (files
/// and links only, never a folder). Best effort: a folder that cannot be
/// listed is left as it is. Returns how many went.
pub fn sweep(dir: &Dir) -> usize {
    let Ok(entries) = dir.entries() else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let stale = owner(name.as_bytes()).is_some_and(is_gone);
        if stale && entry.file_type().is_ok_and(|t| !t.is_dir()) && dir.remove_file(&name).is_ok() {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::disallowed_methods)]
    use super::*;

    #[test]
    fn our_names_are_known_and_no_other() {
        let made = name_for(OsStr::new("big.txt"));
        assert_eq!(owner(made.as_bytes()), Some(std::process::id()));
        assert_eq!(owner(b".a.corral-12-0-1f.tmp"), Some(12));
        assert_eq!(owner(b".x.corral-y.corral-7-3-ab.tmp"), Some(7));
        for other in [
            &b"a.corral-12-0-1f.tmp"[..],
            b".a.corral-12-0-1f.txt",
            b".a.corral-12-0.tmp",
            b".a.corral-12-0-1f-9.tmp",
            b".a.corral-x-0-1f.tmp",
            b".a.corral-12-0-zz.tmp",
            b".corral-12-0-1f.tmp",
            b".a.tmp",
        ] {
            assert_eq!(owner(other), None, "{}", String::from_utf8_lossy(other));
        }
    }

    #[test]
    fn only_the_temp_files_of_gone_processes_are_swept() {
        let tmp = tempfile::tempdir().unwrap();
        // A process that is surely gone: a child that has been reaped.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let gone = child.id();
        child.wait().unwrap();
        let names = [
            format!(".a.txt.corral-{gone}-0-1f.tmp"),
            format!(".a.txt.corral-{}-0-1f.tmp", std::process::id()),
            ".a.txt.corral-1-0-1f.tmp".to_string(), // init: alive
            "a.txt".to_string(),
            format!("a.corral-{gone}-0-1f.tmp"),
        ];
        for name in &names {
            std::fs::write(tmp.path().join(name), "x").unwrap();
        }
        std::fs::create_dir(tmp.path().join(format!(".d.corral-{gone}-0-1.tmp"))).unwrap();
        let dir = Dir::open_ambient_dir(tmp.path(), cap_std::ambient_authority()).unwrap();
        assert_eq!(sweep(&dir), 1);
        assert!(!tmp.path().join(&names[0]).exists());
        for name in &names[1..] {
            assert!(tmp.path().join(name).exists(), "{name}");
        }
    }
}
