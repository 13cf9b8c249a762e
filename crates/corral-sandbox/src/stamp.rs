//! A file's or folder's stamp: which inode it is and when it last
//! changed. Adding, removing or renaming a name in a folder, writing a
//! file, or setting either's times changes its change time, which no call
//! can set back (`touch -d` sets it to now); a file or folder replaced is
//! another inode. What is derived from the tree (a walk, a copy of `/etc`)
//! is kept with the stamps it was drawn from, and reused while they hold.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::Duration;

/// How long what the view is made of is taken to hold once looked at:
/// the stamps of the `/etc` copy (`prepared`; checking them takes about a tenth of a
/// millisecond, a cost every command paid), and the home's toolchain
/// parts (`view::toolchain_parts`). A change reaches commands a second
/// later at the latest.
pub(crate) const RECHECK: Duration = Duration::from_secs(1);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    dev: u64,
    ino: u64,
    ctime: i64,
    ctime_nsec: i64,
}

impl Stamp {
    pub(crate) fn of(meta: &std::fs::Metadata) -> Stamp {
        Stamp {
            dev: meta.dev(),
            ino: meta.ino(),
            ctime: meta.ctime(),
            ctime_nsec: meta.ctime_nsec(),
        }
    }

    /// The entry at `path` now, not following a last link (`None`: gone).
    pub(crate) fn here(path: &Path) -> Option<Stamp> {
        std::fs::symlink_metadata(path).ok().map(|m| Stamp::of(&m))
    }

    /// When it last changed, as a time since the epoch.
    pub(crate) fn changed(&self) -> Duration {
        let secs = u64::try_from(self.ctime).unwrap_or(0);
        let nanos = u32::try_from(self.ctime_nsec).unwrap_or(0);
        Duration::new(secs, nanos.min(999_999_999))
    }
}

impl Stamp {
    /// As a line's field: `dev ino ctime ctime_nsec`.
    pub(crate) fn text(&self) -> String {
        format!(
            "{} {} {} {}",
            self.dev, self.ino, self.ctime, self.ctime_nsec
        )
    }

    /// Read back from [`Stamp::text`].
    pub(crate) fn parse(text: &str) -> Option<Stamp> {
        let mut parts = text.split(' ');
        let stamp = Stamp {
            dev: parts.next()?.parse().ok()?,
            ino: parts.next()?.parse().ok()?,
            ctime: parts.next()?.parse().ok()?,
            ctime_nsec: parts.next()?.parse().ok()?,
        };
        parts.next().is_none().then_some(stamp)
    }
}
