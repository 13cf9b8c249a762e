//! An OpenSSH server of the test's own on 127.0.0.1, for remote projects:
//! a host key and a user key made for the test, the client's
//! `known_hosts` holding that host key (host checking stays on), and a
//! client config reaching it as the host alias `corral-test`. Point
//! `CORRAL_SSH_CONFIG` (or `Remote::config`) at [`Sshd::config`]. `SetEnv`
//! gives the remote side its own cache (where a copied corral-cli goes),
//! data folder and `PATH`.
//!
//! Shared by path (`#[path]`) with corral-cli's suite, which does not
//! depend on the kit. So it uses nothing but std and `tempfile`.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The alias [`Sshd::config`] names the server by.
pub const HOST: &str = "corral-test";

/// A running sshd, killed when dropped.
pub struct Sshd {
    dir: tempfile::TempDir,
    server: Child,
}

impl Sshd {
    /// Starts it; panics (saying what to install) without OpenSSH's server.
    pub fn start() -> Sshd {
        let sshd = Path::new("/usr/sbin/sshd");
        assert!(
            sshd.exists(),
            "OpenSSH's server is needed: scripts/setup.sh --test installs openssh-server"
        );
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for key in ["host_key", "user_key"] {
            let made = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(d.join(key))
                .status()
                .unwrap();
            assert!(made.success());
        }
        std::fs::copy(d.join("user_key.pub"), d.join("authorized_keys")).unwrap();
        for folder in ["remote-cache", "remote-data", "remote-bin"] {
            std::fs::create_dir(d.join(folder)).unwrap();
        }
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let path = format!(
            "{}:/usr/local/bin:/usr/bin:/bin",
            d.join("remote-bin").display()
        );
        std::fs::write(
            d.join("sshd_config"),
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {host}\nPidFile {d}/sshd.pid\n\
                 AuthorizedKeysFile {d}/authorized_keys\nStrictModes no\nUsePAM no\n\
                 PasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\n\
                 PermitRootLogin prohibit-password\nLogLevel ERROR\n\
                 SetEnv XDG_CACHE_HOME={d}/remote-cache XDG_DATA_HOME={d}/remote-data PATH={path}\n",
                host = d.join("host_key").display(),
                d = d.display(),
            ),
        )
        .unwrap();
        let host_key = std::fs::read_to_string(d.join("host_key.pub")).unwrap();
        std::fs::write(
            d.join("known_hosts"),
            format!("[127.0.0.1]:{port} {host_key}"),
        )
        .unwrap();
        let user =
            String::from_utf8(Command::new("id").arg("-un").output().unwrap().stdout).unwrap();
        std::fs::write(
            d.join("ssh_config"),
            format!(
                "Host {HOST}\n  HostName 127.0.0.1\n  Port {port}\n  User {user}\n  IdentityFile {d}/user_key\n\
                 IdentitiesOnly yes\n  UserKnownHostsFile {d}/known_hosts\n  GlobalKnownHostsFile /dev/null\n\
                 StrictHostKeyChecking yes\n",
                user = user.trim(),
                d = d.display(),
            ),
        )
        .unwrap();
        // Run as root, sshd wants its privilege separation folder.
        if user.trim() == "root" {
            let _ = std::fs::create_dir_all("/run/sshd");
        }
        let server = Command::new(sshd)
            .args(["-D", "-e", "-f"])
            .arg(d.join("sshd_config"))
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "sshd did not listen on {port}");
            std::thread::sleep(Duration::from_millis(20));
        }
        Sshd { dir, server }
    }

    /// The client config reaching it as [`HOST`].
    pub fn config(&self) -> PathBuf {
        self.path("ssh_config")
    }

    /// A file or folder of the server's own (`remote-data`, `remote-bin`,
    /// `ssh_config`...).
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Where the remote keeps a corral-cli it was given (of `version`).
    pub fn installed(&self, version: &str) -> PathBuf {
        self.dir
            .path()
            .join("remote-cache/corral/bin")
            .join(format!("corral-cli-{version}"))
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}
