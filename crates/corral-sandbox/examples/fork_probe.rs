#![allow(clippy::unwrap_used, clippy::disallowed_methods, unsafe_code)]
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::Instant;
fn med(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}
fn main() {
    let mb: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(0);
    let ballast: Vec<u8> = vec![1u8; mb << 20];
    let n = 200;
    let (mut spawn, mut fork, mut hooks) = (vec![], vec![], vec![]);
    let procs = std::fs::OpenOptions::new()
        .write(true)
        .open("/sys/fs/cgroup/pids/tasks")
        .unwrap();
    use std::os::fd::AsRawFd;
    let fd = procs.as_raw_fd();
    for _ in 0..n {
        for kind in 0..3 {
            let mut c = Command::new("/usr/bin/true");
            c.stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .process_group(0);
            if kind >= 1 {
                unsafe {
                    c.pre_exec(|| Ok(()));
                }
            }
            if kind == 2 {
                unsafe {
                    c.pre_exec(move || {
                        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                        libc::write(fd, b"0".as_ptr().cast(), 1);
                        let l = libc::rlimit {
                            rlim_cur: 1 << 30,
                            rlim_max: 1 << 30,
                        };
                        libc::setrlimit(libc::RLIMIT_FSIZE, &l);
                        libc::setrlimit(
                            libc::RLIMIT_NOFILE,
                            &libc::rlimit {
                                rlim_cur: 16384,
                                rlim_max: 16384,
                            },
                        );
                        for f in 0..10 {
                            libc::fcntl(fd + 100 + f, libc::F_SETFD, 0);
                        }
                        Ok(())
                    });
                }
            }
            let t = Instant::now();
            let mut ch = c.spawn().unwrap();
            let e = t.elapsed().as_secs_f64() * 1e3;
            ch.wait().unwrap();
            [&mut spawn, &mut fork, &mut hooks][kind].push(e);
        }
    }
    println!(
        "ballast {mb} MiB: posix_spawn {:.3} ms, fork+empty hook {:.3} ms, fork+our hooks {:.3} ms",
        med(spawn),
        med(fork),
        med(hooks)
    );
    drop(ballast);
}
