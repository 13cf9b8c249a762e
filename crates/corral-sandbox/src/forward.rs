//! A background command runs in a network namespace of its own (with the
//! network too: the egress proxy is its way out, see `proxy`): a dev server it starts listens there, out of everyone's
//! reach. Its ports are forwarded: the host listens on 127.0.0.1 (the same
//! port when it is free, another one otherwise) and each connection is
//! passed to the port inside. The connections go in, never out: the
//! command still reaches nothing beyond its namespace.
//!
//! A socket belongs to the namespace it was made in, whatever thread later
//! uses it, so the host side needs only sockets made inside
//! ([`socket_inside`]); the host connects it to the port inside and
//! copies bytes both ways. A network namespace is a thread's own: where
//! bwrap made no user namespace (the app runs as root) the thread that
//! needs the socket steps into the command's network namespace, makes it
//! and steps back. Entering a user namespace takes a single-threaded
//! process, so elsewhere a short-lived child enters the command's user
//! and network namespaces and makes the socket. The child is made as
//! `posix_spawn` makes one (`clone` sharing this process's memory, this
//! thread waiting until it ends), not by a fork: a fork copies the
//! caller's page tables, a cost that grows with the app's memory (tens of
//! milliseconds for a few hundred MiB) and that a command with the
//! network paid before it could start.

use super::ports::{Found, Listener, ListeningPort};
use rustix::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use rustix::net::{AddressFamily, SocketFlags, SocketType};
use std::collections::HashMap;
use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::unix::fs::MetadataExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Ports below this (the system's services') are listed, never forwarded.
const FIRST_FORWARDED: u16 = 1024;
/// The most ports of one command forwarded at once.
const MAX_FORWARDS: usize = 8;
/// The most connections one forward relays at once.
const MAX_RELAYS: usize = 64;

/// The command's namespaces, held open (they outlive its processes until
/// the forwards are dropped).
pub(super) struct Namespaces {
    /// `None` when it is ours (the app runs as root: bwrap makes none).
    user: Option<OwnedFd>,
    net: OwnedFd,
}

struct Forward {
    listener: Arc<TcpListener>,
    host_port: u16,
    closed: Arc<AtomicBool>,
}

/// The forwards of one command; dropping it closes them.
#[derive(Default)]
pub(crate) struct Forwarder {
    namespaces: Option<Arc<Namespaces>>,
    /// Set once opening the namespaces failed: ports are listed, not forwarded.
    failed: bool,
    forwards: HashMap<Listener, Forward>,
}

impl Forwarder {
    /// Forwards the ports `found` lists and closes the forwards of ports
    /// no longer listened on; returns each port with where the host
    /// reaches it.
    pub(crate) fn sync(&mut self, found: &Found) -> Vec<ListeningPort> {
        let Some(pid) = found.netns_pid else {
            // In our namespace already: the host reaches the port itself.
            return found
                .listeners
                .iter()
                .map(|l| ListeningPort {
                    port: l.port,
                    reach_at: Some(l.port),
                })
                .collect();
        };
        if self.namespaces.is_none() && !self.failed {
            match Namespaces::of(pid) {
                Ok(ns) => self.namespaces = Some(Arc::new(ns)),
                Err(_) => self.failed = true,
            }
        }
        self.forwards.retain(|listener, forward| {
            let keep = found.listeners.contains(listener);
            if !keep {
                forward.close();
            }
            keep
        });
        let mut ports = Vec::new();
        for &listener in &found.listeners {
            let allowed = listener.port >= FIRST_FORWARDED && self.forwards.len() < MAX_FORWARDS;
            if allowed && !self.forwards.contains_key(&listener) {
                if let Some(ns) = &self.namespaces {
                    if let Ok(forward) = Forward::open(ns.clone(), listener) {
                        self.forwards.insert(listener, forward);
                    }
                }
            }
            ports.push(ListeningPort {
                port: listener.port,
                reach_at: self.forwards.get(&listener).map(|f| f.host_port),
            });
        }
        ports
    }
}

impl Drop for Forwarder {
    fn drop(&mut self) {
        for forward in self.forwards.values() {
            forward.close();
        }
    }
}

impl Namespaces {
    /// The namespaces of process `pid`, held open.
    // Opens a process's namespaces under /proc, never a project's file.
    #[allow(clippy::disallowed_methods)]
    pub(super) fn of(pid: u32) -> io::Result<Self> {
        let ino = |path: &str| std::fs::metadata(path).map(|m| m.ino());
        let user_path = format!("/proc/{pid}/ns/user");
        let user = if ino(&user_path)? == ino("/proc/self/ns/user")? {
            None
        } else {
            Some(std::fs::File::open(&user_path)?.into())
        };
        let net = std::fs::File::open(format!("/proc/{pid}/ns/net"))?.into();
        Ok(Self { user, net })
    }
}

impl Forward {
    /// Listens on the host for `inside` and serves each connection on a thread.
    fn open(ns: Arc<Namespaces>, inside: Listener) -> io::Result<Self> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, inside.port))
            .or_else(|_| TcpListener::bind((Ipv4Addr::LOCALHOST, 0)))?;
        let host_port = listener.local_addr()?.port();
        let listener = Arc::new(listener);
        let closed = Arc::new(AtomicBool::new(false));
        let (accepting, stop) = (listener.clone(), closed.clone());
        std::thread::Builder::new()
            .name(format!("corral-forward-{}", inside.port))
            .spawn(move || accept(&accepting, &stop, &ns, inside))?;
        Ok(Self {
            listener,
            host_port,
            closed,
        })
    }

    fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        // Wakes the thread blocked in accept (Linux answers it EINVAL).
        let _ = rustix::net::shutdown(&*self.listener, rustix::net::Shutdown::Read);
    }
}

fn accept(listener: &TcpListener, closed: &AtomicBool, ns: &Arc<Namespaces>, inside: Listener) {
    let active = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    while !closed.load(Ordering::SeqCst) {
        match listener.accept() {
            // Past the cap a connection is closed at once.
            Ok(_) if active.load(Ordering::SeqCst) >= MAX_RELAYS => {}
            Ok((client, _)) => {
                let (ns, active) = (ns.clone(), active.clone());
                active.fetch_add(1, Ordering::SeqCst);
                let spawned = std::thread::Builder::new()
                    .name(format!("corral-relay-{}", inside.port))
                    .spawn({
                        let active = active.clone();
                        move || {
                            let _ = relay(client, &ns, inside);
                            active.fetch_sub(1, Ordering::SeqCst);
                        }
                    });
                if spawned.is_err() {
                    active.fetch_sub(1, Ordering::SeqCst);
                }
            }
            Err(_) if closed.load(Ordering::SeqCst) => break,
            // A connection that went away before it was taken, or no file
            // descriptor left for a moment.
            Err(_) => std::thread::sleep(std::time::Duration::from_millis(20)),
        }
    }
}

/// Connects to the port inside and copies both ways until both ends close.
fn relay(client: TcpStream, ns: &Namespaces, inside: Listener) -> io::Result<()> {
    let socket = socket_inside(ns, inside.v6)?;
    let address = if inside.v6 {
        SocketAddr::from((Ipv6Addr::LOCALHOST, inside.port))
    } else {
        SocketAddr::from((Ipv4Addr::LOCALHOST, inside.port))
    };
    rustix::net::connect(&socket, &address)?;
    splice(client, TcpStream::from(socket));
    Ok(())
}

/// Copies bytes both ways between two connections until both ends close.
pub(super) fn splice(client: TcpStream, server: TcpStream) {
    let (Ok(mut client_in), Ok(mut server_out)) = (client.try_clone(), server.try_clone()) else {
        return;
    };
    let upstream = std::thread::spawn(move || {
        let _ = io::copy(&mut client_in, &mut server_out);
        let _ = server_out.shutdown(Shutdown::Write);
    });
    let (mut server_in, mut client_out) = (server, client);
    let _ = io::copy(&mut server_in, &mut client_out);
    let _ = client_out.shutdown(Shutdown::Write);
    let _ = upstream.join();
}

/// A TCP socket made in the command's network namespace (see the module's
/// comment).
pub(super) fn socket_inside(ns: &Namespaces, v6: bool) -> io::Result<OwnedFd> {
    match ns.user {
        None => socket_from_this_thread(&ns.net, v6),
        Some(_) => socket_from_a_child(ns, v6),
    }
}

/// With no user namespace to enter (the app runs as root), this thread
/// enters the command's network namespace, makes the socket and comes
/// back: no task is made and scheduled (a child's start and end took the
/// proxy about 0.4 ms before it could let the command run, this 0.03 ms).
/// Should the way back fail, this thread (the proxy's or a relay's, each
/// serving that command alone) stays inside, where it reaches nothing
/// beyond it.
// Opens this thread's namespace under /proc, never a project's file.
#[allow(clippy::disallowed_methods)]
fn socket_from_this_thread(net: &OwnedFd, v6: bool) -> io::Result<OwnedFd> {
    use rustix::thread::{move_into_link_name_space, LinkNameSpaceType};
    let home = std::fs::File::open("/proc/thread-self/ns/net")?;
    move_into_link_name_space(net.as_fd(), Some(LinkNameSpaceType::Network))?;
    let family = if v6 {
        AddressFamily::INET6
    } else {
        AddressFamily::INET
    };
    let made = rustix::net::socket_with(family, SocketType::STREAM, SocketFlags::CLOEXEC, None);
    move_into_link_name_space(home.as_fd(), Some(LinkNameSpaceType::Network))?;
    Ok(made?)
}

/// A child that shares this process's memory enters the command's user
/// and network namespaces (entering a user namespace takes a task that
/// shares no file-system information) and makes the socket.
#[allow(unsafe_code)]
fn socket_from_a_child(ns: &Namespaces, v6: bool) -> io::Result<OwnedFd> {
    /// What the child is given and gives back, in the memory it shares.
    #[repr(C)]
    struct Job {
        user: libc::c_int,
        net: libc::c_int,
        family: libc::c_int,
        made: libc::c_int,
        errno: libc::c_int,
    }
    /// The child: system calls only (no allocation, no lock), on the
    /// descriptors and the `Job` of the thread that waits for it.
    extern "C" fn enter_and_make(arg: *mut libc::c_void) -> libc::c_int {
        // SAFETY: `arg` is the waiting thread's `Job`, alive and untouched
        // by it until this child has ended (CLONE_VFORK).
        let job = unsafe { &mut *arg.cast::<Job>() };
        // SAFETY: plain system calls on descriptors the job names; errno is
        // the waiting thread's (the child runs on its thread's TLS), which
        // nothing else reads meanwhile.
        unsafe {
            let failed = |job: &mut Job| {
                job.errno = *libc::__errno_location();
                1
            };
            if job.user >= 0 && libc::setns(job.user, libc::CLONE_NEWUSER) != 0 {
                return failed(job);
            }
            if libc::setns(job.net, libc::CLONE_NEWNET) != 0 {
                return failed(job);
            }
            let fd = libc::socket(job.family, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
            if fd < 0 {
                return failed(job);
            }
            job.made = fd;
        }
        0
    }
    let mut job = Job {
        user: ns.user.as_ref().map_or(-1, |u| u.as_raw_fd()),
        net: ns.net.as_raw_fd(),
        family: if v6 { libc::AF_INET6 } else { libc::AF_INET },
        made: -1,
        errno: 0,
    };
    // The child's stack, 16-byte aligned at its top (it grows down).
    let mut stack = vec![0u128; 16 * 1024];
    let top = stack.as_mut_ptr_range().end.cast::<libc::c_void>();
    // SAFETY: as `posix_spawn`: the child shares this process's memory and
    // descriptor table but not its file-system information (a user
    // namespace is entered only by a task that shares none), runs
    // `enter_and_make` on its own stack, and this thread is suspended
    // until it has ended (CLONE_VFORK), so `job` and `stack` outlive it.
    let pid = unsafe {
        libc::clone(
            enter_and_make,
            top,
            libc::CLONE_VM | libc::CLONE_FILES | libc::CLONE_VFORK | libc::SIGCHLD,
            std::ptr::addr_of_mut!(job).cast(),
        )
    };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut status = 0;
    // SAFETY: reaps the child just made, by its pid.
    while unsafe { libc::waitpid(pid, &mut status, 0) } < 0 {
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    drop(stack);
    if job.made < 0 {
        return Err(match job.errno {
            0 => io::Error::other("could not make a socket in the command's network namespace"),
            errno => io::Error::from_raw_os_error(errno),
        });
    }
    // SAFETY: the child made this descriptor in the table it shares with
    // this process, and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(job.made) })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]
    use super::*;
    use std::time::{Duration, Instant};

    fn namespace_ino(path: &str) -> Option<u64> {
        std::fs::metadata(path).ok().map(|m| m.ino())
    }

    /// The network namespace a socket belongs to, by its inode.
    #[allow(unsafe_code)]
    fn namespace_of(socket: &OwnedFd) -> u64 {
        // SAFETY: SIOCGSKNS takes no argument and answers a new descriptor.
        let fd = unsafe { libc::ioctl(socket.as_raw_fd(), libc::SIOCGSKNS) };
        assert!(fd >= 0, "{}", io::Error::last_os_error());
        // SAFETY: the descriptor was just made, for this call alone.
        let file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
        file.metadata().unwrap().ino()
    }

    #[test]
    fn a_socket_made_inside_is_in_the_commands_network_namespace_either_way() {
        // A process in a network namespace of its own, as a command is:
        // `unshare -n` as root, `-rn` (a user namespace too) otherwise.
        let flag = if rustix::process::geteuid().is_root() {
            "-n"
        } else {
            "-rn"
        };
        let Ok(mut other) = std::process::Command::new("unshare")
            .args([flag, "sleep", "30"])
            .spawn()
        else {
            eprintln!("note: no `unshare` here; skipping");
            return;
        };
        let pid = other.id();
        let ours = namespace_ino("/proc/self/ns/net").unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        let theirs = loop {
            match namespace_ino(&format!("/proc/{pid}/ns/net")) {
                Some(ino) if ino != ours => break Some(ino),
                _ if other.try_wait().unwrap().is_some() || Instant::now() > deadline => {
                    break None
                }
                _ => std::thread::sleep(Duration::from_millis(5)),
            }
        };
        let Some(theirs) = theirs else {
            let _ = other.kill();
            eprintln!("note: no network namespace can be made here; skipping");
            return;
        };
        let ns = Namespaces::of(pid).unwrap();
        // The way this machine takes (this thread steps in as root), and
        // the child's way, which every user can take.
        let made = socket_inside(&ns, false).unwrap();
        let by_child = socket_from_a_child(&ns, true).unwrap();
        assert_eq!(namespace_of(&made), theirs);
        assert_eq!(namespace_of(&by_child), theirs);
        // This thread is back where it was.
        assert_eq!(namespace_ino("/proc/thread-self/ns/net"), Some(ours));
        let _ = other.kill();
        let _ = other.wait();
    }
}
