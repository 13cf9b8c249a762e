#![allow(clippy::unwrap_used, clippy::disallowed_methods)]
use corral_fs::ProjectRoot;
use corral_sandbox::{exec_shell, ExecShellInput, ShellRun};
fn main() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a").unwrap();
    let root = ProjectRoot::open(dir.path()).unwrap();
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(30);
    let input = ExecShellInput {
        command: "touch".into(),
        args: vec!["b.txt".into()],
        timeout_secs: None,
        background: false,
    };
    let mut times = Vec::new();
    for _ in 0..n {
        let t = std::time::Instant::now();
        let out = exec_shell(&root, &input, &ShellRun::default()).unwrap();
        times.push(t.elapsed().as_secs_f64() * 1e3);
        assert_eq!(out.exit_code, Some(0), "{out:?}");
    }
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!("exec_shell median {:.2} ms", times[times.len() / 2]);
    let bwrap = "/usr/bin/bwrap";
    let mut times = Vec::new();
    for _ in 0..n {
        let t = std::time::Instant::now();
        let out = std::process::Command::new(bwrap)
            .args([
                "--ro-bind",
                "/",
                "/",
                "--dev",
                "/dev",
                "--proc",
                "/proc",
                "--unshare-net",
                "--unshare-pid",
                "--die-with-parent",
            ])
            .arg("--bind")
            .arg(dir.path())
            .arg(dir.path())
            .args(["--chdir"])
            .arg(dir.path())
            .args(["--", "/usr/bin/touch", "b.txt"])
            .output()
            .unwrap();
        times.push(t.elapsed().as_secs_f64() * 1e3);
        assert!(out.status.success());
    }
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!("bare bwrap median {:.2} ms", times[times.len() / 2]);
}
