//! What one command may use: processes, memory, file size, open files.
//!
//! Set before the program runs, so it and all it starts inherit them
//! (`launch`):
//! - processes: a `pids` cgroup of its own where one can be made (cgroup
//!   v2 where the app's own cgroup is writable, or v1's `pids` hierarchy),
//!   else `RLIMIT_NPROC` (which the kernel does not apply to root);
//! - memory: a `memory` cgroup where one can be made, else
//!   `RLIMIT_AS` at [`AS_FACTOR`] times the limit (address space is not
//!   memory: runtimes reserve far more than they use);
//! - file size: `RLIMIT_FSIZE` (a write past it fails, `SIGXFSZ`);
//! - open files: `RLIMIT_NOFILE`.
//!
//! A limit that was hit is named in the result ([`Limit`]).

// Reads and writes the cgroup filesystem and `/proc`, never the project.
#![allow(clippy::disallowed_methods)]

use serde::{Deserialize, Serialize};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// The limits of one command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Processes (and threads) at once.
    pub processes: u64,
    /// Memory in bytes.
    pub memory_bytes: u64,
    /// Largest file it may write, in bytes.
    pub file_size_bytes: u64,
    /// Open files at once.
    pub open_files: u64,
    /// What its TMPDIR and its `/tmp` may hold, in bytes, each (a tmpfs
    /// of that size: its pages count against the memory limit too).
    pub tmp_bytes: u64,
}

/// Address space allowed per byte of memory when no cgroup can be made.
pub const AS_FACTOR: u64 = 4;

impl Default for Limits {
    /// 4096 processes, 8 GiB of memory, 16 GiB files, 16384 open files,
    /// 2 GiB of temporary files: room for a parallel build, a fence
    /// against a runaway.
    fn default() -> Self {
        Limits {
            processes: 4096,
            memory_bytes: 8 << 30,
            file_size_bytes: 16 << 30,
            open_files: 16384,
            tmp_bytes: 2 << 30,
        }
    }
}

/// A limit a command hit.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, ts_rs::TS,
)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// It tried to start more processes than allowed.
    Processes,
    /// It ran out of its memory.
    Memory,
    /// It wrote a file past the file-size limit.
    FileSize,
    /// It filled its temporary space (TMPDIR or `/tmp`).
    Disk,
}

impl Limit {
    /// What happened, for the result's note.
    pub(crate) fn describe(self, limits: &Limits) -> String {
        match self {
            Limit::Processes => format!(
                "the command hit the process limit ({} processes, {} for all commands at once); a fork failed",
                limits.processes,
                Budget::get().processes
            ),
            Limit::Memory => format!(
                "the command hit the memory limit ({} MiB, {} MiB for all commands at once)",
                limits.memory_bytes >> 20,
                Budget::get().memory_bytes >> 20
            ),
            Limit::FileSize => format!(
                "the command hit the file-size limit ({} MiB): a write past it failed",
                limits.file_size_bytes >> 20
            ),
            Limit::Disk => format!(
                "the command ran out of space: its TMPDIR and /tmp hold {} MiB each (or the disk is full)",
                limits.tmp_bytes >> 20
            ),
        }
    }
}

/// Whether a failed command's output shows a write refused for want of
/// space (`ENOSPC`): its temporary space full.
pub(crate) fn out_of_space(output: &str) -> bool {
    output.contains("ENOSPC") || output.contains("No space left on device")
}

/// Whether a failed command's output shows a write refused for the file
/// size (`EFBIG`): programs that ignore `SIGXFSZ` (node does) report it
/// themselves.
pub(crate) fn file_too_large(output: &str) -> bool {
    output.contains("EFBIG") || output.contains("File too large")
}

/// The cgroups made for one command, removed when dropped.
#[derive(Debug, Default)]
pub(crate) struct Cgroups {
    /// The folders made, with the controller each limits.
    dirs: Vec<(PathBuf, Controller)>,
    /// The file of each the child joins through, opened before the fork:
    /// it writes `0` there (itself) before it becomes bwrap ([`join_file`]).
    procs: Vec<OwnedFd>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Controller {
    Pids,
    Memory,
    /// cgroup v2: both in one folder.
    Unified,
}

impl Cgroups {
    /// Makes the cgroups this machine allows for one command; none when
    /// it allows none (the rlimits then stand in).
    /// Each is made inside this process's budget ([`Budget`]) where that
    /// could be made, so every command of the process shares it.
    pub(crate) fn make(limits: &Limits) -> Cgroups {
        let mut made = Cgroups::default();
        let name = unique_name();
        let own = own_cgroups();
        let budget = Budget::get();
        if let Some(path) = own.unified.as_deref() {
            let parent = Path::new("/sys/fs/cgroup").join(path.trim_start_matches('/'));
            let dir = budget.inside(&parent, Controller::Unified).join(&name);
            if made.add(&dir, Controller::Unified, limits) {
                return made;
            }
        }
        for (controller, own_path) in [
            (Controller::Pids, own.pids.as_deref()),
            (Controller::Memory, own.memory.as_deref()),
        ] {
            let Some(own_path) = own_path else { continue };
            let hierarchy = match controller {
                Controller::Pids => "pids",
                _ => "memory",
            };
            let parent = Path::new("/sys/fs/cgroup")
                .join(hierarchy)
                .join(own_path.trim_start_matches('/'));
            let dir = budget.inside(&parent, controller).join(&name);
            made.add(&dir, controller, limits);
        }
        made
    }

    /// Makes one cgroup folder and sets its limits; false (and nothing
    /// left behind) where it cannot.
    fn add(&mut self, dir: &Path, controller: Controller, limits: &Limits) -> bool {
        if std::fs::create_dir(dir).is_err() {
            return false;
        }
        let set =
            |file: &str, value: u64| std::fs::write(dir.join(file), value.to_string()).is_ok();
        let ok = match controller {
            Controller::Pids => set("pids.max", limits.processes),
            Controller::Memory => {
                set("memory.limit_in_bytes", limits.memory_bytes) && {
                    // Without swap accounting this file is absent.
                    let _ = set("memory.memsw.limit_in_bytes", limits.memory_bytes);
                    true
                }
            }
            Controller::Unified => {
                set("pids.max", limits.processes) && set("memory.max", limits.memory_bytes) && {
                    let _ = set("memory.swap.max", 0);
                    true
                }
            }
        };
        let procs = std::fs::OpenOptions::new()
            .write(true)
            .open(dir.join(join_file(controller)))
            .map(OwnedFd::from);
        match (ok, procs) {
            (true, Ok(fd)) => {
                self.dirs.push((dir.to_path_buf(), controller));
                self.procs.push(fd);
                true
            }
            _ => {
                let _ = std::fs::remove_dir(dir);
                false
            }
        }
    }

    /// Whether processes are limited by a cgroup.
    pub(crate) fn limits_processes(&self) -> bool {
        self.dirs
            .iter()
            .any(|(_, c)| matches!(c, Controller::Pids | Controller::Unified))
    }

    /// Whether memory is limited by a cgroup.
    pub(crate) fn limits_memory(&self) -> bool {
        self.dirs
            .iter()
            .any(|(_, c)| matches!(c, Controller::Memory | Controller::Unified))
    }

    /// The limits that were hit, as the cgroups counted them.
    pub(crate) fn hit(&self) -> Vec<Limit> {
        let mut hit = Vec::new();
        for (dir, controller) in &self.dirs {
            let read = |file: &str| std::fs::read_to_string(dir.join(file)).unwrap_or_default();
            let count = |text: &str, key: &str| {
                text.lines()
                    .filter_map(|l| l.split_once(' '))
                    .find(|(k, _)| *k == key)
                    .and_then(|(_, v)| v.trim().parse::<u64>().ok())
                    .unwrap_or(0)
            };
            if matches!(controller, Controller::Pids | Controller::Unified)
                && count(&read("pids.events"), "max") > 0
            {
                hit.push(Limit::Processes);
            }
            let memory = match controller {
                Controller::Memory => count(&read("memory.oom_control"), "oom_kill") > 0,
                Controller::Unified => count(&read("memory.events"), "oom_kill") > 0,
                Controller::Pids => false,
            };
            if memory {
                hit.push(Limit::Memory);
            }
        }
        hit
    }

    /// The files the child joins through before it execs.
    pub(crate) fn procs(&self) -> Vec<std::os::fd::BorrowedFd<'_>> {
        self.procs.iter().map(AsFd::as_fd).collect()
    }

    /// On cgroup v1: moves the calling thread alone into each cgroup
    /// (`0` to `tasks`: the cheap path [`join_file`] explains) until the
    /// guard is dropped, which moves it back where it was. What it starts
    /// meanwhile (bwrap) is born inside. Not on v2, where only whole
    /// processes move, nor where the thread's own cgroups cannot be
    /// written to go back: the guard then says so ([`Entered::inside`])
    /// and bwrap's child joins by pid ([`Cgroups::join`]).
    pub(crate) fn enter(&self) -> Entered {
        let mut entered = Entered {
            home: Vec::new(),
            inside: false,
        };
        if self.dirs.iter().any(|(_, c)| *c == Controller::Unified) {
            return entered;
        }
        // Every way back is opened before the first move.
        let Ok(homes) = self
            .dirs
            .iter()
            .map(|(_, controller)| thread_home(*controller))
            .collect::<std::io::Result<Vec<OwnedFd>>>()
        else {
            return entered;
        };
        for (fd, home) in self.procs.iter().zip(homes) {
            if rustix::io::write(fd, b"0").is_err() {
                // Dropped: back where it was, and joined by pid instead.
                return entered;
            }
            entered.home.push(home);
        }
        entered.inside = true;
        entered
    }

    /// Moves process `pid` (bwrap's child at its gate, before it runs the
    /// program) into each cgroup, where bwrap was not born inside them
    /// ([`Cgroups::enter`]). Moving another process takes the kernel's
    /// system-wide lock, with its grace period.
    pub(crate) fn join(&self, pid: u32) -> std::io::Result<()> {
        let pid = pid.to_string();
        for fd in &self.procs {
            rustix::io::write(fd, pid.as_bytes())?;
        }
        Ok(())
    }
}

impl Drop for Cgroups {
    fn drop(&mut self) {
        // A cgroup can be removed once its last process is gone; the
        // namespace's processes die with bwrap, shortly after the group
        // was killed. What cannot be removed at once is left to a thread
        // of its own, so the call does not wait for their exit.
        let left: Vec<PathBuf> = self
            .dirs
            .drain(..)
            .map(|(dir, _)| dir)
            .filter(|dir| std::fs::remove_dir(dir).is_err())
            .collect();
        if left.is_empty() {
            return;
        }
        // Without a thread the cgroup is left behind, its processes killed
        // with the group and the namespace.
        let _ = std::thread::Builder::new()
            .name("corral-cgroup-removal".into())
            .spawn(move || remove_when_empty(&left));
    }
}

/// A thread inside a command's cgroups ([`Cgroups::enter`]); dropped, it
/// is moved back to the cgroups it came from.
pub(crate) struct Entered {
    /// The `tasks` file of each cgroup it came from.
    home: Vec<OwnedFd>,
    inside: bool,
}

impl Entered {
    /// Whether the thread is in every cgroup of the command.
    pub(crate) fn inside(&self) -> bool {
        self.inside
    }
}

impl Drop for Entered {
    fn drop(&mut self) {
        for home in &self.home {
            // A thread left in a command's cgroup would be counted, and
            // limited, with the command: try again before giving up.
            for _ in 0..3 {
                if rustix::io::write(home, b"0").is_ok() {
                    break;
                }
            }
        }
    }
}

/// The budget every command of this process shares, read only: its
/// processes and its memory in bytes (`u64::MAX` where the machine's
/// memory could not be read). For the window's Settings.
pub fn budget() -> (u64, u64) {
    let budget = Budget::get();
    (budget.processes, budget.memory_bytes)
}

/// What every command of this process shares, whichever project it runs
/// in: one cgroup per hierarchy (`corral-PID-budget`), made on first use
/// under the app's own, with every command's cgroups inside it. Below the
/// machine's: processes at [`Budget::PROCESSES`], memory at three
/// quarters of the machine's (`MemTotal`).
pub(crate) struct Budget {
    pub processes: u64,
    pub memory_bytes: u64,
    /// The budget's folder in each hierarchy where it could be made.
    made: Mutex<Vec<(PathBuf, Controller)>>,
}

impl Budget {
    /// Processes (and threads) all commands of the process may have at
    /// once: two commands at their own limit.
    pub const PROCESSES: u64 = 8192;

    /// This process's budget.
    pub(crate) fn get() -> &'static Budget {
        static BUDGET: std::sync::OnceLock<Budget> = std::sync::OnceLock::new();
        // `CORRAL_PROCESS_BUDGET` and `CORRAL_MEMORY_BUDGET_MIB` set a
        // smaller one (never a larger one than the machine's).
        let set = |name: &str| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
        };
        BUDGET.get_or_init(|| {
            let machine = machine_memory().map_or(u64::MAX, |total| total / 4 * 3);
            Budget {
                processes: set("CORRAL_PROCESS_BUDGET")
                    .map_or(Budget::PROCESSES, |n| n.min(Budget::PROCESSES)),
                memory_bytes: set("CORRAL_MEMORY_BUDGET_MIB")
                    .map_or(machine, |mib| (mib << 20).min(machine)),
                made: Mutex::new(Vec::new()),
            }
        })
    }

    /// Where a command's cgroup goes under `parent` (the app's own in
    /// `controller`'s hierarchy): inside the budget, made now if it is not
    /// yet; `parent` itself where it cannot be made.
    fn inside(&self, parent: &Path, controller: Controller) -> PathBuf {
        let dir = parent.join(format!("{PREFIX}{}-budget", std::process::id()));
        let mut made = self.made.lock().unwrap_or_else(PoisonError::into_inner);
        if made.iter().any(|(d, _)| *d == dir) {
            return dir;
        }
        let _ = std::fs::create_dir(&dir);
        let set = |file: &str, value: &str| std::fs::write(dir.join(file), value).is_ok();
        let ok = match controller {
            Controller::Pids => set("pids.max", &self.processes.to_string()),
            Controller::Memory => set("memory.limit_in_bytes", &self.memory_bytes.to_string()),
            Controller::Unified => {
                set("pids.max", &self.processes.to_string())
                    && set("memory.max", &self.memory_bytes.to_string())
                    && set("cgroup.subtree_control", "+pids +memory")
            }
        };
        if ok {
            made.push((dir.clone(), controller));
            dir
        } else {
            let _ = std::fs::remove_dir(&dir);
            parent.to_path_buf()
        }
    }
}

/// The machine's memory, from `/proc/meminfo`'s `MemTotal`.
fn machine_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The `tasks` file of the calling thread's own cgroup in `controller`'s
/// v1 hierarchy (from `/proc/thread-self/cgroup`), opened to write.
fn thread_home(controller: Controller) -> std::io::Result<OwnedFd> {
    let hierarchy = match controller {
        Controller::Pids => "pids",
        Controller::Memory => "memory",
        Controller::Unified => return Err(std::io::Error::other("cgroup v2 has no thread moves")),
    };
    let text = std::fs::read_to_string("/proc/thread-self/cgroup")?;
    let path = text
        .lines()
        .filter_map(|line| {
            let mut parts = line.splitn(3, ':');
            let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            controllers
                .split(',')
                .any(|c| c == hierarchy)
                .then_some(path)
        })
        .next()
        .ok_or_else(|| std::io::Error::other(format!("no {hierarchy} cgroup for this thread")))?;
    let tasks = Path::new("/sys/fs/cgroup")
        .join(hierarchy)
        .join(path.trim_start_matches('/'))
        .join("tasks");
    Ok(std::fs::OpenOptions::new().write(true).open(tasks)?.into())
}

/// Removes each cgroup once its processes are gone, killing any left, for
/// at most half a second.
fn remove_when_empty(dirs: &[PathBuf]) {
    for dir in dirs {
        for _ in 0..50 {
            if std::fs::remove_dir(dir).is_ok() {
                break;
            }
            if let Ok(procs) = std::fs::read_to_string(dir.join("cgroup.procs")) {
                // Never this process: a thread of it may pass through a
                // command's cgroup while it starts bwrap.
                let own = i32::try_from(std::process::id()).unwrap_or(0);
                for pid in procs
                    .lines()
                    .filter_map(|l| l.trim().parse::<i32>().ok())
                    .filter(|pid| *pid != own)
                {
                    if let Some(pid) = rustix::process::Pid::from_raw(pid) {
                        let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
                    }
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

/// Where a thread writes `0` to join a cgroup (a forked child, or the
/// thread that starts bwrap, [`Cgroups::enter`]).
///
/// On v1 it is `tasks`, which moves the writing thread alone: the kernel
/// then skips the system-wide lock that keeps thread groups still while
/// they move (`cgroup_threadgroup_rwsem`), whose every first taking waits
/// for an RCU grace period, 10 to 40 ms here, which was nearly all a
/// sandboxed command cost over bare bwrap. It skips it only for `0`, the
/// writer itself: a pid, even of a process of one thread, takes the lock
/// (8 ms a command here, measured). What the thread starts after is born
/// inside. v2 moves only whole processes (`cgroup.procs`).
fn join_file(controller: Controller) -> &'static str {
    match controller {
        Controller::Pids | Controller::Memory => "tasks",
        Controller::Unified => "cgroup.procs",
    }
}

/// The app's own cgroups, from `/proc/self/cgroup`.
#[derive(Default)]
struct OwnCgroups {
    unified: Option<String>,
    pids: Option<String>,
    memory: Option<String>,
}

fn own_cgroups() -> OwnCgroups {
    let mut own = OwnCgroups::default();
    let text = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        match controllers {
            "" => own.unified = Some(path.to_string()),
            c if c.split(',').any(|c| c == "pids") => own.pids = Some(path.to_string()),
            c if c.split(',').any(|c| c == "memory") => own.memory = Some(path.to_string()),
            _ => {}
        }
    }
    // A v2 hierarchy is only used when it is the one mounted at
    // `/sys/fs/cgroup` (with v1 controllers there, it holds none).
    if !Path::new("/sys/fs/cgroup/cgroup.controllers").exists() {
        own.unified = None;
    }
    own
}

/// How the cgroups of a command are named, before the process id.
const PREFIX: &str = "corral-";

fn unique_name() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "{PREFIX}{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Removes the cgroups of processes that have ended (what they had made
/// ahead, or not yet removed), beside where this one makes its own. One
/// with processes still in it cannot be removed and is left.
pub(crate) fn sweep() {
    let own = own_cgroups();
    let mut parents = Vec::new();
    if let Some(path) = own.unified.as_deref() {
        parents.push(Path::new("/sys/fs/cgroup").join(path.trim_start_matches('/')));
    }
    for (hierarchy, path) in [("pids", &own.pids), ("memory", &own.memory)] {
        if let Some(path) = path {
            parents.push(
                Path::new("/sys/fs/cgroup")
                    .join(hierarchy)
                    .join(path.trim_start_matches('/')),
            );
        }
    }
    for parent in parents {
        let Ok(entries) = std::fs::read_dir(&parent) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let pid = name
                .to_str()
                .and_then(|n| n.strip_prefix(PREFIX))
                .and_then(|rest| rest.split('-').next())
                .and_then(|pid| pid.parse::<u32>().ok());
            let ended = pid.is_some_and(|pid| {
                pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists()
            });
            if ended && std::fs::remove_dir(entry.path()).is_err() {
                // A budget: the cgroups of its commands first.
                for inner in std::fs::read_dir(entry.path())
                    .into_iter()
                    .flatten()
                    .flatten()
                {
                    if inner.path().is_dir() {
                        let _ = std::fs::remove_dir(inner.path());
                    }
                }
                let _ = std::fs::remove_dir(entry.path());
            }
        }
    }
}

/// The rlimits for the child, given what the cgroups already limit:
/// (resource, value) pairs to set soft and hard, never above the hard
/// limit the app has (only root may raise it).
pub(crate) fn rlimits(limits: &Limits, cgroups: &Cgroups) -> Vec<(rustix::process::Resource, u64)> {
    use rustix::process::{getrlimit, Resource};
    let mut set = vec![
        (Resource::Fsize, limits.file_size_bytes),
        (Resource::Nofile, limits.open_files),
    ];
    if !cgroups.limits_processes() {
        set.push((Resource::Nproc, limits.processes));
    }
    if !cgroups.limits_memory() {
        set.push((Resource::As, limits.memory_bytes.saturating_mul(AS_FACTOR)));
    }
    for (resource, value) in &mut set {
        if let Some(hard) = getrlimit(*resource).maximum {
            *value = (*value).min(hard);
        }
    }
    set
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::disallowed_methods)]
    use super::*;

    fn thread_cgroups() -> String {
        std::fs::read_to_string("/proc/thread-self/cgroup").unwrap()
    }

    #[test]
    fn a_thread_that_entered_a_command_s_cgroups_goes_back_where_it_was() {
        let cgroups = Cgroups::make(&Limits::default());
        let v1 = !cgroups.dirs.iter().any(|(_, c)| *c == Controller::Unified);
        if cgroups.dirs.is_empty() || !v1 {
            return;
        }
        let before = thread_cgroups();
        let name = cgroups.dirs[0]
            .0
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let entered = cgroups.enter();
        assert!(entered.inside());
        assert!(thread_cgroups().contains(&name), "{}", thread_cgroups());
        // The rest of the process stays where it was.
        let process = std::fs::read_to_string("/proc/self/cgroup").unwrap();
        assert!(!process.contains(&name), "{process}");
        drop(entered);
        assert_eq!(thread_cgroups(), before);
    }
}
