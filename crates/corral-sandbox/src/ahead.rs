//! A run's own places, made ahead and put away after: its private folder
//! (TMPDIR) and its cgroups, still a fresh set for every run.
//!
//! Both cost a command more than their few system calls suggest: on ext4
//! removing a folder waits on the journal (about a millisecond each, and
//! a run's folder is two), and making the cgroups and setting their limits
//! takes most of another. So a process keeps one set ready (a pool of
//! one), made on a thread of its own ("corral-runs") when a run has
//! ended, and a finished run's set is removed on that thread too: the
//! run renames its folder out of the way first (one cheap rename), so
//! nothing is left under the name the program knew when the call returns.
//! The next set is made after a run, not when one starts: made then, it
//! would take a processor from the starting command (on two cores, about
//! a third of a millisecond of its start), while after a run the caller
//! is reading the output.
//!
//! A process that runs a single command (`corral-cli call`) makes nothing
//! ahead: sets are made ahead from its second run on. What a process had
//! ready when it ended, or had not yet removed, is swept by the next
//! process's thread (by the process id in the names).

use super::env::TempDir;
use super::limits::{self, Cgroups, Limits};
use corral_fs::Result;
use std::path::PathBuf;
use std::sync::mpsc::{self, Sender};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// One run's places.
pub(crate) struct Places {
    /// Holds TMPDIR (and, where the prepared view is not ready, the masks).
    pub tmp: TempDir,
    /// The run's TMPDIR.
    pub tmpdir: PathBuf,
    /// Its cgroups, made for `limits`.
    pub cgroups: Cgroups,
    limits: Limits,
}

impl Places {
    /// A fresh set, made now.
    fn make(limits: &Limits) -> Result<Places> {
        let tmp = TempDir::create()?;
        let tmpdir = tmp.subdir("tmp")?;
        Ok(Places {
            tmp,
            tmpdir,
            cgroups: Cgroups::make(limits),
            limits: *limits,
        })
    }
}

/// What the thread does.
enum Job {
    /// Makes a set for these limits and keeps it ready.
    Prepare(Limits),
    /// Removes a finished run's places.
    Remove(Places),
}

struct State {
    runs: u32,
    ready: Option<Places>,
    /// Where the thread takes its jobs; `None` until the first is sent,
    /// or when it could not be started (then all is done in place).
    jobs: Option<Sender<Job>>,
    started: bool,
}

fn lock() -> MutexGuard<'static, State> {
    static STATE: Mutex<State> = Mutex::new(State {
        runs: 0,
        ready: None,
        jobs: None,
        started: false,
    });
    STATE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The places for a run with `limits`: the set made ahead if it was made
/// for the same limits, else a new one.
pub(crate) fn take(limits: &Limits) -> Result<Places> {
    let (ready, stale) = {
        let mut state = lock();
        state.runs = state.runs.saturating_add(1);
        match state.ready.take() {
            Some(set) if set.limits == *limits => (Some(set), None),
            other => (None, other),
        }
    };
    if let Some(stale) = stale {
        remove(stale);
    }
    match ready {
        Some(set) => Ok(set),
        None => Places::make(limits),
    }
}

/// Puts a finished run's places away ([`remove`]) and, from a process's
/// second run on, has the next set made ahead for the same limits. Read
/// what the cgroups counted before.
pub(crate) fn put_away(places: Places) {
    if lock().runs >= 2 {
        send(Job::Prepare(places.limits));
    }
    remove(places);
}

/// Removes places: the folder is renamed out of the way now, and removed
/// with its cgroups on the thread (in place if there is none).
fn remove(places: Places) {
    let places = Places {
        tmp: places.tmp.set_aside(),
        ..places
    };
    send(Job::Remove(places));
}

/// Hands a job to the thread, starting it on first use; a job the thread
/// cannot take is done here.
fn send(job: Job) {
    let mut state = lock();
    if !state.started {
        state.started = true;
        let (tx, rx) = mpsc::channel::<Job>();
        let spawned = std::thread::Builder::new()
            .name("corral-runs".into())
            .spawn(move || {
                // What ended processes left behind, once per process.
                super::env::sweep();
                limits::sweep();
                for job in rx {
                    work(job);
                }
            });
        if spawned.is_ok() {
            state.jobs = Some(tx);
        }
    }
    let refused = match &state.jobs {
        Some(jobs) => jobs.send(job).err().map(|e| e.0),
        None => Some(job),
    };
    drop(state);
    // No thread: removals are done in place, nothing is made ahead.
    if let Some(Job::Remove(places)) = refused {
        drop(places);
    }
}

fn work(job: Job) {
    match job {
        Job::Prepare(limits) => {
            if lock().ready.is_some() {
                return;
            }
            let Ok(made) = Places::make(&limits) else {
                return;
            };
            let replaced = lock().ready.replace(made);
            // Dropped outside the lock: removing is slow.
            drop(replaced);
        }
        // Dropping removes the folder and the cgroups.
        Job::Remove(places) => drop(places),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::disallowed_methods)]
    use super::*;
    use std::time::{Duration, Instant};

    fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
        let started = Instant::now();
        while !done() {
            assert!(started.elapsed() < Duration::from_secs(30), "{what}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn ready_folder() -> Option<PathBuf> {
        lock().ready.as_ref().map(|r| r.tmp.path().to_path_buf())
    }

    // One test: the pool is the process's own.
    #[test]
    fn a_set_is_made_ahead_used_once_and_removed_after() {
        let limits = Limits::default();
        let first = take(&limits).unwrap();
        assert!(first.tmpdir.is_dir());
        let first_folder = first.tmp.path().to_path_buf();
        put_away(first);
        // Its name is free at once, the folder itself gone soon after.
        assert!(!first_folder.exists());

        // Nothing is made while a run goes on; the next set is made
        // once it has ended.
        let second = take(&limits).unwrap();
        assert!(ready_folder().is_none());
        let second_folder = second.tmp.path().to_path_buf();
        put_away(second);
        wait_for("no set was made ahead", || ready_folder().is_some());
        let ahead = ready_folder().unwrap();
        assert_ne!(ahead, second_folder);
        assert!(ahead.join("tmp").is_dir());

        // The next run gets the set made ahead, never one used before.
        let third = take(&limits).unwrap();
        assert_eq!(third.tmp.path(), ahead);
        std::fs::write(third.tmpdir.join("left.txt"), "x").unwrap();
        let used = third.tmp.path().to_path_buf();
        put_away(third);
        assert!(!used.exists(), "the used folder is still at its name");
        wait_for("a new set was not made ahead", || {
            ready_folder().is_some_and(|f| f != used && f != ahead)
        });

        // A set made for other limits is not used for these.
        let other = Limits {
            processes: 77,
            ..Limits::default()
        };
        let ready = ready_folder().unwrap();
        let fourth = take(&other).unwrap();
        assert_ne!(fourth.tmp.path(), ready);
        assert_eq!(fourth.limits, other);
        wait_for("the unused set was not removed", || !ready.exists());

        // Nothing set aside is left once the thread has removed it.
        put_away(fourth);
        let base = std::env::temp_dir();
        let pid = std::process::id();
        wait_for("a folder set aside was left", || {
            std::fs::read_dir(&base).unwrap().flatten().all(|e| {
                !e.file_name()
                    .to_string_lossy()
                    .starts_with(&format!("corral-gone-{pid}-"))
            })
        });
    }
}
