use corral_fs::ProjectRoot;
use corral_sandbox::{exec_shell, ExecShellInput, ShellRun};
use std::process::{Command, Stdio};
use std::time::Instant;
fn main() {
    let dir = tempfile::tempdir().unwrap();
    for d in 0..10 {
        let folder = dir.path().join(format!("src{d}"));
        std::fs::create_dir(&folder).unwrap();
        for f in 0..20 {
            std::fs::write(folder.join(format!("f{f}.rs")), "fn main() {}\n").unwrap();
        }
    }
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    std::fs::write(dir.path().join(".env"), "KEY=1\n").unwrap();
    let git = |args: &[&str]| {
        Command::new("/usr/bin/git")
            .args(["-c", "user.name=b", "-c", "user.email=b@b"])
            .args(args)
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .status()
            .unwrap();
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "x"]);
    std::thread::sleep(std::time::Duration::from_millis(1200));
    let root = ProjectRoot::open(dir.path()).unwrap();
    let prof = std::env::args().nth(1).unwrap_or("build".into());
    let n: usize = std::env::args()
        .nth(2)
        .map(|s| s.parse().unwrap())
        .unwrap_or(100);
    let (name, args, network): (&str, Vec<String>, bool) = match prof.as_str() {
        "read_only" => ("ls", vec!["-la".into()], false),
        "network" => ("touch", vec!["a.txt".into()], true),
        _ => ("touch", vec!["a.txt".into()], false),
    };
    let input = ExecShellInput {
        command: name.into(),
        args: args.clone(),
        timeout_secs: None,
        background: false,
    };
    let run = ShellRun {
        network,
        ..ShellRun::default()
    };
    for _ in 0..5 {
        exec_shell(&root, &input, &run).unwrap();
    }
    std::thread::sleep(std::time::Duration::from_millis(1200));
    let mut ours = Vec::new();
    let mut bare = Vec::new();
    let path = format!("/usr/bin/{name}");
    let blocks = std::env::var_os("BLOCKS").is_some();
    for i in 0..n {
        if !blocks || (i / 25) % 2 == 0 {
            let t = Instant::now();
            let o = exec_shell(&root, &input, &run).unwrap();
            assert_eq!(o.exit_code, Some(0));
            ours.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        if blocks && (i / 25) % 2 == 0 {
            continue;
        }
        let t = Instant::now();
        let out = Command::new("/usr/bin/bwrap")
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
                "--bind",
            ])
            .arg(dir.path())
            .arg(dir.path())
            .arg("--")
            .arg(&path)
            .args(&args)
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success());
        bare.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    ours.sort_by(|a, b| a.partial_cmp(b).unwrap());
    bare.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let (o, b) = (ours[ours.len() / 2], bare[bare.len() / 2]);
    println!(
        "{prof}: ours median {o:.2} bare median {b:.2} diff {:.2} (n {} {})",
        o - b,
        ours.len(),
        bare.len()
    );
}
