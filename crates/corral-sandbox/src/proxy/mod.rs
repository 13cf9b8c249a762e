//! The egress proxy: a command granted the network still runs in a
//! network namespace of its own, where the only thing it can reach is
//! this proxy on `127.0.0.1:PORT`. The proxy runs in Corral's process and
//! connects upstream from the host's namespace, for the allowed domains
//! only, never to a local, private or metadata address (`address`).
//!
//! How the listener gets inside, with no helper program in the sandbox:
//! bwrap is started with `--info-fd` (it reports the sandbox's pid once
//! the namespaces exist) and `--block-fd` (the sandbox waits before it
//! runs the program). Once the pid is known, a TCP socket is made in the
//! sandbox's network namespace (`forward::socket_inside`: a socket belongs
//! to the namespace it was made in), bound to `PORT` there and listened
//! on from here; then the block is released and the program starts with
//! the proxy already listening. The namespace is fresh, so `PORT` is free.
//! If any step fails the block is released anyway: the program runs with
//! no way out at all, and its output says why.
//!
//! Each connection (HTTP `CONNECT`, plain HTTP with an absolute URL, or
//! SOCKS5) is judged and logged in the command's stderr as
//! `corral proxy: allowed ...` or `corral proxy: refused ...` (`http`).
//!
//! Corral's own process goes out the same way: [`connect`] judges a
//! connection by the same rules, in the same code, and makes it
//! (`web_fetch` reads a page through it).

mod address;
mod domains;
mod http;

pub use domains::{is_valid_pattern, DEFAULT_DOMAINS};

use super::forward::{socket_inside, Namespaces};
use super::launch::Release;
use rustix::fd::{AsRawFd, OwnedFd};
use std::collections::HashMap;
use std::ffi::OsString;
use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// Where the proxy listens inside the sandbox.
pub(crate) const PORT: u16 = 3128;
/// The most connections served at once for one command.
const MAX_CONNECTIONS: usize = 64;

/// Asked once for a domain on neither allowlist, with the domain (or the
/// address, when a program named one); `true` allows it for this command.
/// The caller remembers its answers (for the conversation), so that a
/// domain is asked about once.
pub type DomainAsk = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// Where a command with the network may go: the default allowlist
/// ([`DEFAULT_DOMAINS`]), plus the user's domains, plus what `ask` allows.
#[derive(Clone, Default)]
pub struct Egress {
    /// Domains the user allowed beyond the defaults: a name, or `*.name`
    /// for every name below it ([`is_valid_pattern`]).
    pub allowed_domains: Vec<String>,
    /// Asked about any other domain; `None` refuses it.
    pub ask: Option<DomainAsk>,
}

/// Why [`connect`] made no connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// The rules refused it: a port other than 80 and 443, a local,
    /// private or metadata address (named, or what the name resolves
    /// to), or a domain on no allowlist that the user did not allow.
    Denied(String),
    /// The name did not resolve, or no address of it answered.
    Unreachable(String),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Denied(why) | Refused::Unreachable(why) => f.write_str(why),
        }
    }
}

/// A connection from Corral's own process to `host:port`, judged as the
/// proxy judges a sandboxed command's: the port (80 or 443), the host on
/// the default allowlist or `egress.allowed_domains`, else allowed by
/// `egress.ask` (asked on every call here: the caller's hook keeps the
/// answers, the window's for the conversation), the name resolved once
/// and every address checked against the refused ranges, then connected
/// to a checked address (never to the name again). Returns the stream
/// and the address it reached.
pub fn connect(
    egress: &Egress,
    host: &str,
    port: u16,
) -> Result<(std::net::TcpStream, SocketAddr), Refused> {
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    let host = domains::normal(host);
    let allowed = |host: &str| {
        domains::allowed(host, &egress.allowed_domains)
            || egress.ask.as_ref().is_some_and(|ask| ask(host))
    };
    http::judge_and_connect(&host, port, egress.ask.is_some(), &allowed).map_err(|r| match r {
        http::Refusal::Denied(why) => Refused::Denied(why),
        http::Refusal::Unreachable(why) => Refused::Unreachable(why),
    })
}

/// Receives each line the proxy logs (one connection each, no newline).
pub(crate) type Log = Arc<dyn Fn(&str) + Send + Sync>;

/// The variables that point programs at the proxy. Most tools read the
/// `*_proxy` pair; npm, cargo, pip and yarn also read their own.
pub(crate) fn env_vars() -> Vec<(OsString, OsString)> {
    let url = format!("http://127.0.0.1:{PORT}");
    [
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "npm_config_proxy",
        "npm_config_https_proxy",
        "CARGO_HTTP_PROXY",
        "PIP_PROXY",
        "YARN_HTTP_PROXY",
        "YARN_HTTPS_PROXY",
    ]
    .into_iter()
    .map(|key| (key.into(), url.clone().into()))
    // Node's own `fetch` reads the variables only when told to.
    .chain([("NODE_USE_ENV_PROXY".into(), "1".into())])
    .collect()
}

/// The two channels bwrap is given, before the spawn: it writes the
/// sandbox's pid to one and waits on the other.
pub(crate) struct Gate {
    /// Our ends: the pid arrives here; a byte (or closing it) releases.
    info: UnixStream,
    release: UnixStream,
    /// bwrap's ends, inherited by it alone (see [`Gate::hand_to`]).
    info_child: OwnedFd,
    block_child: OwnedFd,
}

impl Gate {
    pub(crate) fn new() -> std::io::Result<Self> {
        let (info, info_child) = UnixStream::pair()?;
        let (release, block_child) = UnixStream::pair()?;
        // Above the standard streams, which the spawn rewires.
        let above = |fd: UnixStream| rustix::io::fcntl_dupfd_cloexec(&fd, 3);
        Ok(Self {
            info,
            release,
            info_child: above(info_child)?,
            block_child: above(block_child)?,
        })
    }

    /// bwrap's options naming its two channels.
    pub(crate) fn bwrap_args(&self) -> [OsString; 4] {
        [
            "--info-fd".into(),
            self.info_child.as_raw_fd().to_string().into(),
            "--block-fd".into(),
            self.block_child.as_raw_fd().to_string().into(),
        ]
    }

    /// Lets `cmd`'s process inherit bwrap's ends (every other descriptor
    /// stays close-on-exec). Our copies close with `cmd`. Returns our ends.
    pub(crate) fn hand_to(self, cmd: &mut Command) -> Pending {
        let (info_child, block_child) = (self.info_child, self.block_child);
        let hook = move || -> std::io::Result<()> {
            for fd in [&info_child, &block_child] {
                rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::empty())?;
            }
            Ok(())
        };
        #[allow(unsafe_code)]
        // SAFETY: the hook runs in the forked child before `exec` and only
        // calls `fcntl(F_SETFD)` on two descriptors opened before the fork;
        // its errors come from rustix's `Errno`, which does not allocate.
        unsafe {
            cmd.pre_exec(hook);
        }
        Pending {
            info: self.info,
            release: self.release,
        }
    }
}

/// Our ends of the gate, until the proxy starts serving.
pub(crate) struct Pending {
    info: UnixStream,
    release: UnixStream,
}

/// A running proxy; dropping it stops taking connections.
pub(crate) struct Proxy {
    shared: Arc<Shared>,
}

struct Shared {
    egress: Egress,
    log: Log,
    closed: AtomicBool,
    listener: Mutex<Option<Arc<TcpListener>>>,
    /// Answers for this command: a domain is asked about once.
    answers: Mutex<HashMap<String, bool>>,
    /// Held while asking, so that two connections do not ask twice.
    asking: Mutex<()>,
    /// What was refused, for the result's note.
    refused: Mutex<Vec<String>>,
}

impl Pending {
    /// Starts serving on a thread: waits for the sandbox's pid, listens
    /// inside it, then releases the program.
    pub(crate) fn serve(self, egress: Egress, log: Log) -> Proxy {
        let Pending { info, release } = self;
        let release = move || release_program(release);
        serve(egress, log, move || sandbox_pid(info), release).0
    }
}

/// Starts serving the sandbox `pid`, whose first process waits at its
/// gate (`launch`): listens inside it on a thread, then releases it. It
/// is released whatever happens, even when no thread can be started.
pub(crate) fn serve_inside(pid: u32, release: Release, egress: Egress, log: Log) -> Proxy {
    let release = Arc::new(release);
    let ours = release.clone();
    let (proxy, started) = serve(egress, log, move || Ok(pid), move || release.release());
    if !started {
        let _ = ours.release();
    }
    proxy
}

/// Serves on a thread: listens in the network namespace of the sandbox
/// `pid` names, then lets the program run; and whether the thread started
/// (if not, the program was not released and has no network).
fn serve(
    egress: Egress,
    log: Log,
    pid: impl FnOnce() -> std::io::Result<u32> + Send + 'static,
    release: impl FnOnce() -> std::io::Result<()> + Send + 'static,
) -> (Proxy, bool) {
    let shared = Arc::new(Shared {
        egress,
        log,
        closed: AtomicBool::new(false),
        listener: Mutex::new(None),
        answers: Mutex::new(HashMap::new()),
        asking: Mutex::new(()),
        refused: Mutex::new(Vec::new()),
    });
    let serving = shared.clone();
    let started = std::thread::Builder::new()
        .name("corral-proxy".into())
        .spawn(move || {
            match pid().and_then(listen_at) {
                Ok(listener) => {
                    let listener = Arc::new(listener);
                    *lock(&serving.listener) = Some(listener.clone());
                    let _ = release();
                    // Closed while the listener was being made.
                    if !serving.closed.load(Ordering::SeqCst) {
                        accept(&listener, &serving);
                    }
                }
                Err(e) => {
                    let _ = release();
                    (serving.log)(&format!(
                        "corral proxy: could not start ({e}); the command has no network"
                    ));
                }
            }
        });
    if let Err(e) = &started {
        (shared.log)(&format!(
            "corral proxy: could not start ({e}); the command has no network"
        ));
    }
    (Proxy { shared }, started.is_ok())
}

impl Proxy {
    /// The domains and addresses refused so far, each once.
    pub(crate) fn refused(&self) -> Vec<String> {
        lock(&self.shared.refused).clone()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.shared.closed.store(true, Ordering::SeqCst);
        if let Some(listener) = lock(&self.shared.listener).as_ref() {
            // Wakes the thread blocked in accept.
            let _ = rustix::net::shutdown(&**listener, rustix::net::Shutdown::Read);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The sandbox's pid, as bwrap reports it once its namespaces exist.
#[derive(serde::Deserialize)]
struct Info {
    #[serde(rename = "child-pid")]
    child_pid: u32,
}

/// The sandbox's pid, as bwrap reports it once its namespaces exist.
fn sandbox_pid(info: UnixStream) -> std::io::Result<u32> {
    // One JSON object; bwrap keeps the channel open no longer than that.
    let info: Info = serde_json::Deserializer::from_reader(info)
        .into_iter::<Info>()
        .next()
        .ok_or_else(|| std::io::Error::other("the sandbox did not start"))?
        .map_err(|e| std::io::Error::other(format!("bwrap's report was unreadable: {e}")))?;
    Ok(info.child_pid)
}

/// Listens on `PORT` in the network namespace of the sandbox `pid`.
fn listen_at(pid: u32) -> std::io::Result<TcpListener> {
    let ns = Namespaces::of(pid)?;
    let socket: OwnedFd = socket_inside(&ns, false)?;
    // Any address: the namespace has nothing but its loopback (which
    // bwrap may not have brought up yet).
    rustix::net::bind(&socket, &SocketAddr::from((Ipv4Addr::UNSPECIFIED, PORT)))?;
    rustix::net::listen(&socket, 128)?;
    Ok(TcpListener::from(socket))
}

fn release_program(mut release: UnixStream) -> std::io::Result<()> {
    release.write_all(b"go")
}

fn accept(listener: &TcpListener, shared: &Arc<Shared>) {
    let active = Arc::new(AtomicUsize::new(0));
    while !shared.closed.load(Ordering::SeqCst) {
        match listener.accept() {
            // Past the cap a connection is closed at once.
            Ok(_) if active.load(Ordering::SeqCst) >= MAX_CONNECTIONS => {}
            Ok((client, _)) => {
                active.fetch_add(1, Ordering::SeqCst);
                let (shared, active) = (shared.clone(), active.clone());
                let done = active.clone();
                let spawned = std::thread::Builder::new()
                    .name("corral-proxy-conn".into())
                    .spawn(move || {
                        http::serve(client, &shared);
                        done.fetch_sub(1, Ordering::SeqCst);
                    });
                if spawned.is_err() {
                    active.fetch_sub(1, Ordering::SeqCst);
                }
            }
            Err(_) if shared.closed.load(Ordering::SeqCst) => break,
            Err(_) => std::thread::sleep(std::time::Duration::from_millis(20)),
        }
    }
}

impl Shared {
    /// Whether `host` may be reached: on an allowlist, or allowed when
    /// asked (once per host for this command).
    fn domain_allowed(&self, host: &str) -> bool {
        if domains::allowed(host, &self.egress.allowed_domains) {
            return true;
        }
        let Some(ask) = &self.egress.ask else {
            return false;
        };
        let host = domains::normal(host);
        let _asking = lock(&self.asking);
        if let Some(answer) = lock(&self.answers).get(&host) {
            return *answer;
        }
        let answer = ask(&host);
        lock(&self.answers).insert(host, answer);
        answer
    }

    fn note_refused(&self, what: &str) {
        let mut refused = lock(&self.refused);
        if !refused.iter().any(|r| r == what) {
            refused.push(what.to_string());
        }
    }
}
