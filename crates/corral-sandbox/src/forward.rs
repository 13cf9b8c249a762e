//! A background command runs in a network namespace of its own (with the
//! network too: the egress proxy is its way out, see `proxy`): a dev server it starts listens there, out of everyone's
//! reach. Its ports are forwarded: the host listens on 127.0.0.1 (the same
//! port when it is free, another one otherwise) and each connection is
//! passed to the port inside. The connections go in, never out: the
//! command still reaches nothing beyond its namespace.
//!
//! A socket belongs to the namespace it was made in, whatever thread later
//! uses it, so the host side needs only sockets made inside. Entering a
//! namespace takes a single-threaded process, so for each connection a
//! short-lived child (`/bin/true`, with a hook run between its fork and
//! its exec) enters the command's user and network namespaces, makes one
//! TCP socket and hands it back over a socket pair (`SCM_RIGHTS`); the
//! host connects it to the port inside and copies bytes both ways.

use super::ports::{Found, Listener, ListeningPort};
use rustix::fd::{AsFd, OwnedFd};
use rustix::net::{
    AddressFamily, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags, SocketFlags, SocketType,
};
use rustix::thread::LinkNameSpaceType;
use std::collections::HashMap;
use std::io::{self, IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::net::{Ipv4Addr, Ipv6Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
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
    let (ours, theirs) = rustix::net::socketpair(
        AddressFamily::UNIX,
        SocketType::STREAM,
        SocketFlags::CLOEXEC,
        None,
    )?;
    let user = ns.user.as_ref().map(OwnedFd::try_clone).transpose()?;
    let net = ns.net.try_clone()?;
    let family = if v6 {
        AddressFamily::INET6
    } else {
        AddressFamily::INET
    };
    let hook = move || -> io::Result<()> {
        if let Some(user) = &user {
            rustix::thread::move_into_link_name_space(user.as_fd(), Some(LinkNameSpaceType::User))?;
        }
        rustix::thread::move_into_link_name_space(net.as_fd(), Some(LinkNameSpaceType::Network))?;
        let socket =
            rustix::net::socket_with(family, SocketType::STREAM, SocketFlags::CLOEXEC, None)?;
        let fds = [socket.as_fd()];
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
        let mut control = SendAncillaryBuffer::new(&mut space);
        control.push(SendAncillaryMessage::ScmRights(&fds));
        rustix::net::sendmsg(
            &theirs,
            &[IoSlice::new(b"s")],
            &mut control,
            SendFlags::empty(),
        )?;
        Ok(())
    };
    let mut cmd = Command::new(TRUE);
    cmd.env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    #[allow(unsafe_code)]
    // SAFETY: the hook runs in the forked child before `exec` and only makes
    // syscalls on file descriptors opened before the fork (`setns`,
    // `socket`, `sendmsg`); its buffers are on the stack and its errors come
    // from `io::Error::from_raw_os_error` (rustix's conversion), which does
    // not allocate.
    unsafe {
        cmd.pre_exec(hook);
    }
    let spawned = cmd.spawn();
    // The child's end and our copies of the namespaces close with the hook.
    drop(cmd);
    spawned?.wait()?;
    let mut byte = [0u8; 1];
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    rustix::net::recvmsg(
        &ours,
        &mut [IoSliceMut::new(&mut byte)],
        &mut control,
        RecvFlags::CMSG_CLOEXEC,
    )?;
    for message in control.drain() {
        if let RecvAncillaryMessage::ScmRights(mut fds) = message {
            if let Some(fd) = fds.next() {
                return Ok(fd);
            }
        }
    }
    Err(io::Error::other(
        "could not make a socket in the command's network namespace",
    ))
}

/// The program the socket-making child execs once its hook has run.
const TRUE: &str = "/bin/true";
