//! No host socket from inside: a seccomp filter, handed to bwrap
//! (`--seccomp FD`), or installed by the child itself where only Landlock
//! fences it (no namespaces), lets `socket()` make an `AF_INET` or
//! `AF_INET6` socket and nothing else.
//!
//! A read-only mount does not stop `connect()`: with a socket file in
//! sight (`/run/docker.sock`, the D-Bus system bus, postgres) a child
//! could talk to a host service, and abstract sockets (`@/tmp/.X11-unix/X0`)
//! need no file at all. The empty `/run` hides the files; this filter
//! refuses the socket itself, path and abstract alike, so neither can be
//! reached. The other families reach past the command's network namespace
//! too (`AF_VSOCK` talks to the hypervisor's host on a VM or WSL2,
//! `AF_NETLINK` to the kernel), so the rule is by inclusion: a family not
//! named is refused, one added to the kernel tomorrow included. The two
//! left only reach the command's own namespace: its loopback, or the
//! egress proxy when it has the network. One more is let through, for
//! the namespace's own interfaces only: `AF_NETLINK` with the protocol
//! `NETLINK_ROUTE` (`getifaddrs`; node's `os.networkInterfaces()` throws
//! without it, and dev servers call it); its routes and addresses are the
//! namespace's, and without capabilities nothing there can be changed.
//! Every other netlink protocol (device events, audit) is refused. `socketpair(AF_UNIX)`, which
//! talks only to itself (node's and cargo's pipes to their children),
//! stays allowed. `io_uring_setup` is refused too: io_uring can create
//! sockets without the `socket` call.
//!
//! On x86_64 the x32 ABI reaches the same system calls under other
//! numbers (`nr | 0x40000000`) with the same `AUDIT_ARCH_X86_64`, which
//! a filter by number never matches: every x32 number is refused, by
//! instructions of our own put before seccompiler's program (it cannot
//! name a range of numbers; [`refuse_x32`]).
//!
//! A refused call fails with `EACCES`.

use std::io::Write;
use std::sync::OnceLock;

/// The filter, compiled once: as instructions (for the Landlock
/// fallback, which installs it itself) and as the bytes bwrap reads
/// (`struct sock_filter` after `struct sock_filter`).
struct Compiled {
    instructions: seccompiler::BpfProgram,
    bytes: Vec<u8>,
}

fn compiled() -> Result<&'static Compiled, &'static str> {
    static PROGRAM: OnceLock<Result<Compiled, String>> = OnceLock::new();
    PROGRAM
        .get_or_init(compile)
        .as_ref()
        .map_err(String::as_str)
}

/// The compiled filter as bwrap reads it, or why it could not be built.
fn program() -> Result<&'static [u8], &'static str> {
    compiled().map(|c| c.bytes.as_slice())
}

/// The compiled filter as the kernel takes it, for a child to install
/// itself before `exec` ([`install`]), or why it could not be built.
pub(crate) fn instructions() -> Result<&'static [seccompiler::sock_filter], &'static str> {
    compiled().map(|c| c.instructions.as_slice())
}

/// Installs `program` on the calling thread. Only system calls, no
/// allocation: safe between `fork` and `exec`.
pub(crate) fn install(program: &[seccompiler::sock_filter]) -> std::io::Result<()> {
    seccompiler::apply_filter(program).map_err(|e| match e {
        seccompiler::Error::Prctl(e) | seccompiler::Error::Seccomp(e) => e,
        _ => std::io::Error::from_raw_os_error(libc::EINVAL),
    })
}

fn compile() -> Result<Compiled, String> {
    use seccompiler::{
        BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
        SeccompRule, TargetArch,
    };
    let arch: TargetArch = std::env::consts::ARCH
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())?;
    // The domain is an `int`: its low 32 bits are what the kernel reads.
    let not = |family: libc::c_int| {
        SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Ne,
            u64::from(family.unsigned_abs()),
        )
        .map_err(|e| e.to_string())
    };
    // One rule, its conditions all true: neither of the two families.
    let other_family = SeccompRule::new(vec![
        not(libc::AF_INET)?,
        not(libc::AF_INET6)?,
        not(libc::AF_NETLINK)?,
    ])
    .map_err(|e| e.to_string())?;
    // Netlink for the namespace's own routes only (`getifaddrs`: node's
    // `os.networkInterfaces()`, which dev servers call to print their
    // addresses); its other protocols (the kernel's device events, audit,
    // ...) reach past the namespace.
    let is_netlink = SeccompCondition::new(
        0,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::Eq,
        u64::from(libc::AF_NETLINK.unsigned_abs()),
    )
    .map_err(|e| e.to_string())?;
    let not_route = SeccompCondition::new(
        2,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::Ne,
        u64::from(libc::NETLINK_ROUTE.unsigned_abs()),
    )
    .map_err(|e| e.to_string())?;
    let other_netlink = SeccompRule::new(vec![is_netlink, not_route]).map_err(|e| e.to_string())?;
    let rules = [
        (libc::SYS_socket, vec![other_family, other_netlink]),
        (libc::SYS_io_uring_setup, Vec::new()),
    ];
    let filter = SeccompFilter::new(
        rules.into_iter().collect(),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EACCES.unsigned_abs()),
        arch,
    )
    .map_err(|e| e.to_string())?;
    let by_number: BpfProgram = filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())?;
    let mut program = refuse_x32();
    program.extend(by_number);
    let mut bytes = Vec::with_capacity(program.len() * 8);
    for insn in &program {
        bytes.extend_from_slice(&insn.code.to_ne_bytes());
        bytes.push(insn.jt);
        bytes.push(insn.jf);
        bytes.extend_from_slice(&insn.k.to_ne_bytes());
    }
    Ok(Compiled {
        instructions: program,
        bytes,
    })
}

/// The instructions put before seccompiler's program on x86_64: an x32
/// system call (`AUDIT_ARCH_X86_64`, its number at or above
/// `__X32_SYSCALL_BIT`) fails with `EACCES`; anything else goes on to
/// the program, which checks the architecture again and then the number.
/// They are whole by themselves (their jumps land inside them or on the
/// program's first instruction), so they do not depend on how seccompiler
/// lays out its own. Elsewhere, nothing: no other architecture has a
/// second numbering under the same audit value.
fn refuse_x32() -> Vec<seccompiler::sock_filter> {
    #[cfg(target_arch = "x86_64")]
    {
        use seccompiler::sock_filter;
        // `include/uapi/linux/audit.h`: EM_X86_64 | 64-bit | little-endian.
        const AUDIT_ARCH_X86_64: u32 = 62 | 0x8000_0000 | 0x4000_0000;
        const X32_SYSCALL_BIT: u32 = 0x4000_0000;
        // `struct seccomp_data`: the number, then the architecture.
        const NR: u32 = 0;
        const ARCH: u32 = 4;
        let op = |code: u32| u16::try_from(code).unwrap_or(u16::MAX);
        let load = |at: u32| sock_filter {
            code: op(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS),
            jt: 0,
            jf: 0,
            k: at,
        };
        let jump = |cmp: u32, k: u32, jt: u8, jf: u8| sock_filter {
            code: op(libc::BPF_JMP | cmp | libc::BPF_K),
            jt,
            jf,
            k,
        };
        let refuse = sock_filter {
            code: op(libc::BPF_RET | libc::BPF_K),
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ERRNO | (libc::EACCES.unsigned_abs() & libc::SECCOMP_RET_DATA),
        };
        vec![
            load(ARCH),
            // Not x86_64: on to the program (3 ahead).
            jump(libc::BPF_JEQ, AUDIT_ARCH_X86_64, 0, 3),
            load(NR),
            // x32: the refusal next; else on to the program (1 ahead).
            jump(libc::BPF_JGE, X32_SYSCALL_BIT, 0, 1),
            refuse,
        ]
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        Vec::new()
    }
}

/// The filter in a memory file, at its start, for bwrap to read
/// (`--seccomp FD`): one per run, since bwrap reads it to its end, and
/// never a file on disk to write and remove.
pub(crate) fn filter_file() -> std::io::Result<std::fs::File> {
    use rustix::fs::{memfd_create, MemfdFlags};
    use std::io::{Seek, SeekFrom};
    let program = program().map_err(std::io::Error::other)?;
    let mut file = std::fs::File::from(memfd_create("corral-seccomp", MemfdFlags::CLOEXEC)?);
    file.write_all(program)?;
    file.seek(SeekFrom::Start(0))?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::disallowed_methods)]

    #[test]
    fn the_filter_file_holds_the_whole_program_from_its_start() {
        use std::io::Read;
        let mut read = Vec::new();
        super::filter_file()
            .unwrap()
            .read_to_end(&mut read)
            .unwrap();
        assert_eq!(read, super::program().unwrap());
    }

    #[test]
    fn the_filter_compiles_to_whole_instructions() {
        let program = super::program().unwrap();
        assert!(!program.is_empty());
        assert_eq!(program.len() % 8, 0);
    }

    /// The filter installed on a thread of this test (a filter holds the
    /// thread that installs it and what it starts, nothing else): the
    /// kernel's answers.
    #[test]
    fn only_inet_sockets_are_made_and_no_x32_call_gets_through() {
        use rustix::net::{socket, socketpair, AddressFamily, SocketFlags, SocketType};
        fn errno<T>(made: rustix::io::Result<T>) -> Result<(), i32> {
            made.map(drop).map_err(|e| e.raw_os_error())
        }
        let refused = Err(libc::EACCES);
        let answers = std::thread::spawn(move || {
            super::install(super::instructions().unwrap()).unwrap();
            let make = |family, kind| errno(socket(family, kind, None));
            let pair = errno(socketpair(
                AddressFamily::UNIX,
                SocketType::STREAM,
                SocketFlags::CLOEXEC,
                None,
            ));
            #[allow(unsafe_code)]
            // SAFETY: system calls with plain numbers as arguments, the
            // first ending in a refusal or the pid, the second in a refusal
            // or an error (no entries asked, no parameters given).
            let (x32_getpid, io_uring) = unsafe {
                let x32 = libc::syscall(0x4000_0000 | libc::SYS_getpid);
                let x32 = (x32, std::io::Error::last_os_error().raw_os_error());
                let ring = libc::syscall(libc::SYS_io_uring_setup, 0, 0);
                (x32, (ring, std::io::Error::last_os_error().raw_os_error()))
            };
            (
                [
                    make(AddressFamily::INET, SocketType::STREAM),
                    make(AddressFamily::INET, SocketType::DGRAM),
                    make(AddressFamily::UNIX, SocketType::STREAM),
                    make(AddressFamily::UNIX, SocketType::DGRAM),
                    make(AddressFamily::VSOCK, SocketType::STREAM),
                    errno(socket(
                        AddressFamily::NETLINK,
                        SocketType::DGRAM,
                        Some(rustix::net::Protocol::from_raw(
                            std::num::NonZeroU32::new(15).unwrap(),
                        )),
                    )),
                    make(AddressFamily::PACKET, SocketType::DGRAM),
                    make(AddressFamily::BLUETOOTH, SocketType::STREAM),
                    make(
                        AddressFamily::from_raw(u16::try_from(libc::AF_ALG).unwrap()),
                        SocketType::SEQPACKET,
                    ),
                ],
                make(AddressFamily::INET6, SocketType::STREAM),
                pair,
                x32_getpid,
                io_uring,
            )
        })
        .join()
        .unwrap();
        let (families, inet6, pair, x32_getpid, io_uring) = answers;
        let [inet, udp, refused_ones @ ..] = families;
        assert_eq!((inet, udp), (Ok(()), Ok(())));
        for (at, answer) in refused_ones.iter().enumerate() {
            assert_eq!(*answer, refused, "family {at} after inet");
        }
        // A machine may have no IPv6, but the filter lets it be asked.
        assert_ne!(inet6, refused);
        assert_eq!(pair, Ok(()));
        #[cfg(target_arch = "x86_64")]
        assert_eq!(x32_getpid, (-1, Some(libc::EACCES)));
        #[cfg(not(target_arch = "x86_64"))]
        let _ = x32_getpid;
        assert_eq!(io_uring, (-1, Some(libc::EACCES)));
    }

    /// What a command sees of the filter, in the namespaces, without and
    /// with the network: the other families refused, x32 too, and an
    /// `AF_INET` server on its own loopback still answers.
    #[test]
    fn a_sandboxed_command_opens_only_inet_sockets_and_its_loopback_still_works() {
        const PROBE: &str = r#"import ctypes, socket
out = []
for name, family, kind, proto in [
    ("unix", socket.AF_UNIX, socket.SOCK_STREAM, 0),
    ("vsock", socket.AF_VSOCK, socket.SOCK_STREAM, 0),
    ("netlink", socket.AF_NETLINK, socket.SOCK_DGRAM, 15),
    ("route", socket.AF_NETLINK, socket.SOCK_RAW, 0),
    ("packet", socket.AF_PACKET, socket.SOCK_DGRAM, 0),
    ("inet", socket.AF_INET, socket.SOCK_STREAM, 0),
]:
    try:
        socket.socket(family, kind, proto).close()
        out.append(name + "=ok")
    except OSError as e:
        out.append("%s=%d" % (name, e.errno))
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
got = libc.syscall(ctypes.c_long(0x40000000 | 39))
out.append("x32=%d/%d" % (got, ctypes.get_errno()))
server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(1)
client = socket.create_connection(server.getsockname())
peer, _ = server.accept()
client.sendall(b"hello")
out.append("loopback=" + peer.recv(5).decode())
print(" ".join(out))
"#;
        let python = std::path::Path::new("/usr/bin/python3");
        if !crate::namespaces_available() || !python.exists() {
            eprintln!("note: no bubblewrap or python3 here; skipping");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("probe.py"), PROBE).unwrap();
        let root = corral_fs::ProjectRoot::open(dir.path()).unwrap();
        let input = crate::ExecShellInput {
            command: "python3".into(),
            args: vec!["probe.py".into()],
            timeout_secs: None,
            background: false,
        };
        let eacces = libc::EACCES;
        let mut expected = format!(
            "unix={eacces} vsock={eacces} netlink={eacces} route=ok packet={eacces} inet=ok"
        );
        if cfg!(target_arch = "x86_64") {
            expected += &format!(" x32=-1/{eacces}");
        }
        for network in [false, true] {
            let run = crate::ShellRun {
                network,
                ..crate::ShellRun::default()
            };
            let out = crate::exec_shell(&root, &input, &run).unwrap();
            assert_eq!(out.sandbox, crate::Sandbox::Namespaces, "{out:?}");
            assert!(
                out.stdout.starts_with(&expected) && out.stdout.ends_with(" loopback=hello\n"),
                "network {network}: {out:?}"
            );
        }
    }
}
