//! No host socket from inside: a seccomp filter, handed to bwrap
//! (`--seccomp FD`), or installed by the child itself where only Landlock
//! fences it (no namespaces), refuses `socket(AF_UNIX, ...)`.
//!
//! A read-only mount does not stop `connect()`: with a socket file in
//! sight (`/run/docker.sock`, the D-Bus system bus, postgres) a child
//! could talk to a host service, and abstract sockets (`@/tmp/.X11-unix/X0`)
//! need no file at all. The empty `/run` hides the files; this filter
//! refuses the socket itself, path and abstract alike, so neither can be
//! reached. `socketpair(AF_UNIX)`, which talks only to itself (node's and
//! cargo's pipes to their children), stays allowed. `io_uring_setup` is
//! refused too: io_uring can create sockets without the `socket` call.
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
    let unix = SeccompCondition::new(
        0,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::Eq,
        u64::from(libc::AF_UNIX.unsigned_abs()),
    )
    .map_err(|e| e.to_string())?;
    let rules = [
        (
            libc::SYS_socket,
            vec![SeccompRule::new(vec![unix]).map_err(|e| e.to_string())?],
        ),
        (libc::SYS_io_uring_setup, Vec::new()),
    ];
    let filter = SeccompFilter::new(
        rules.into_iter().collect(),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EACCES.unsigned_abs()),
        arch,
    )
    .map_err(|e| e.to_string())?;
    let program: BpfProgram = filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())?;
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
    #![allow(clippy::unwrap_used)]

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
}
