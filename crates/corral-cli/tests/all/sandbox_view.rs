//! What a child sees is built from nothing: a fixture home full of tokens
//! (cargo's credentials and config, `~/.npmrc`, nvm's global `npmrc`, uv's
//! credentials, another project in `~/go/src`) shows none of them to any
//! profile, and what a read-only child sees, walked from `/`, is exactly
//! the allowlist `docs/security.md` documents.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

fn namespaces_here() -> bool {
    let ok = ["/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"]
        .iter()
        .any(|p| Path::new(p).exists())
        && Path::new("/usr/bin/node").exists();
    if !ok {
        eprintln!("note: bubblewrap or node is missing; skipping a sandbox view test");
    }
    ok
}

/// The tokens a fixture home holds, relative to it.
const TOKENS: [&str; 8] = [
    ".cargo/credentials.toml",
    ".cargo/credentials",
    ".cargo/config.toml",
    ".npmrc",
    ".nvm/versions/node/v20.0.0/etc/npmrc",
    ".local/share/uv/credentials/credentials.toml",
    "go/src/other-project/token.txt",
    ".config/gh/hosts.yml",
];

/// A project (a git repository with one commit and a change) and a home
/// holding every token of [`TOKENS`] beside toolchain folders, in the
/// system's temporary folder.
fn fixture() -> (tempfile::TempDir, PathBuf, PathBuf) {
    fixture_in(&std::env::temp_dir())
}

/// [`fixture`] in `base`.
fn fixture_in(base: &Path) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let work = tempfile::tempdir_in(base).unwrap();
    let root = work.path().join("project");
    let home = work.path().join("home");
    for token in TOKENS {
        let path = home.join(token);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "TOKEN-SECRET-VALUE\n").unwrap();
    }
    for dir in [
        ".cargo/bin",
        ".nvm/versions/node/v20.0.0/bin",
        "go/bin",
        ".rustup/toolchains/stable/bin",
        ".rustup/downloads",
    ] {
        std::fs::create_dir_all(home.join(dir)).unwrap();
    }
    std::fs::create_dir_all(&root).unwrap();
    git(&root, &["init", "-q"]);
    std::fs::write(root.join("a.txt"), "one\n").unwrap();
    git(&root, &["add", "a.txt"]);
    git(&root, &["commit", "-qm", "one"]);
    std::fs::write(root.join("a.txt"), "two\n").unwrap();
    (work, root, home)
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .status()
        .unwrap()
        .success();
    assert!(ok, "git {args:?}");
}

/// `corral-cli call exec_shell` in `root` with `home` as the home.
fn call(root: &Path, home: &Path, extra: &[&str], input: Value) -> Value {
    let out = crate::common::corral_cli()
        .args(["call", "--root", root.to_str().unwrap(), "--mode", "ask"])
        .args(extra)
        .args(["exec_shell", &input.to_string()])
        .env("HOME", home)
        .env("CARGO_HOME", home.join(".cargo"))
        .env_remove("RUSTUP_HOME")
        .env_remove("XDG_CACHE_HOME")
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)))
}

/// Plants `script` as the repository's external diff: an unasked `git
/// diff` runs it in the read-only profile.
fn plant_diff(root: &Path, script: &str) {
    std::fs::write(root.join("planted.js"), script).unwrap();
    let mut config = std::fs::OpenOptions::new()
        .append(true)
        .open(root.join(".git/config"))
        .unwrap();
    std::io::Write::write_all(&mut config, b"[diff]\n\texternal = node planted.js\n").unwrap();
}

/// A node script that reads every token of [`TOKENS`] in `home` and
/// prints `READ` and, for each, its text or the error's code.
fn read_tokens(home: &Path) -> String {
    let paths: Vec<String> = TOKENS
        .iter()
        .map(|t| home.join(t).display().to_string())
        .collect();
    format!(
        "const fs = require('fs'); const r = [];
        for (const p of {paths:?}) {{
            try {{ r.push(p + '=' + fs.readFileSync(p, 'utf8').trim()) }} catch (e) {{ r.push(p + '=' + e.code) }}
        }}
        console.log('READ ' + r.join(' '))"
    )
}

#[test]
fn a_token_in_the_home_is_unreadable_from_every_profile() {
    if !namespaces_here() {
        return;
    }
    let (_work, root, home) = fixture();
    let script = read_tokens(&home);
    plant_diff(&root, &script);
    let read_only = call(
        &root,
        &home,
        &[],
        json!({"command": "git", "args": ["diff"]}),
    );
    assert_eq!(read_only["profile"], "read_only", "{read_only}");
    let build = call(
        &root,
        &home,
        &["--approve"],
        json!({"command": "node", "args": ["-e", script]}),
    );
    assert_eq!(build["profile"], "build", "{build}");
    let network = call(
        &root,
        &home,
        &["--approve", "--network"],
        json!({"command": "node", "args": ["-e", script]}),
    );
    assert_eq!(network["profile"], "network", "{network}");
    for result in [read_only, build, network] {
        let text = format!("{}{}", result["stdout"], result["stderr"]);
        assert!(text.contains("READ "), "the probe did not run: {result}");
        assert!(!text.contains("TOKEN-SECRET-VALUE"), "{result}");
        assert_eq!(
            text.matches("=ENOENT").count(),
            TOKENS.len(),
            "every token is absent, not merely unreadable: {result}"
        );
    }
}

/// A program that lies in a toolchain folder of the home (`cargo` in
/// `~/.cargo/bin`) runs from that folder: its install prefix would be the
/// whole cargo home, whose credentials its build scripts could then read.
#[test]
fn a_program_in_the_cargo_bin_folder_sees_no_token_either() {
    if !namespaces_here() {
        return;
    }
    let (_work, root, home) = fixture();
    // What a build script run by `cargo build` could do, as the program.
    let cargo = home.join(".cargo/bin/cargo");
    std::fs::write(&cargo, format!("#!/usr/bin/node\n{}\n", read_tokens(&home))).unwrap();
    std::fs::set_permissions(&cargo, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    for network in [false, true] {
        let extra: &[&str] = if network {
            &["--approve", "--network"]
        } else {
            &["--approve"]
        };
        let result = call(
            &root,
            &home,
            extra,
            json!({"command": "cargo", "args": ["build"]}),
        );
        let text = format!("{}{}", result["stdout"], result["stderr"]);
        assert!(text.contains("READ "), "the program did not run: {result}");
        assert!(!text.contains("TOKEN-SECRET-VALUE"), "{result}");
        assert_eq!(text.matches("=ENOENT").count(), TOKENS.len(), "{result}");
    }
}

/// An approved git sees the user's git configuration (a commit needs the
/// user's name), and what git runs (a signing program the repository
/// names) sees it too, but never git's credential stores beside it, nor
/// a token the configuration itself holds (an `insteadOf` URL, an
/// `extraHeader`): only its safe sections are copied in.
#[test]
fn what_git_runs_sees_the_git_configuration_but_no_credential() {
    if !namespaces_here() {
        return;
    }
    let (_work, root, home) = fixture();
    std::fs::write(
        home.join(".gitconfig"),
        "[user]\n\tname = T\n\temail = t@t\n\
         [url \"https://u:TOKEN-SECRET-VALUE@example.invalid/\"]\n\tinsteadOf = https://example.invalid/\n\
         [http]\n\textraHeader = Authorization: TOKEN-SECRET-VALUE\n",
    )
    .unwrap();
    let config = home.join(".config/git");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config"), "[core]\n").unwrap();
    let stores = [config.join("credentials"), home.join(".git-credentials")];
    for store in &stores {
        std::fs::write(store, "https://u:TOKEN-SECRET-VALUE@example.invalid\n").unwrap();
    }
    let paths: Vec<String> = [home.join(".gitconfig"), config.join("config")]
        .iter()
        .chain(&stores)
        .map(|p| p.display().to_string())
        .collect();
    let signer = root.join("sign.js");
    std::fs::write(
        &signer,
        format!(
            "#!/usr/bin/node
            const fs = require('fs'); const r = [];
            for (const p of {paths:?}) {{
                try {{
                    const text = fs.readFileSync(p, 'utf8');
                    r.push(text.includes('TOKEN-SECRET-VALUE') ? 'token' : text.includes('name = T') ? 'name' : 'read')
                }} catch (e) {{ r.push(e.code) }}
            }}
            console.error('SIGNER ' + r.join(' ')); process.exit(1)\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&signer, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut repo_config = std::fs::OpenOptions::new()
        .append(true)
        .open(root.join(".git/config"))
        .unwrap();
    std::io::Write::write_all(
        &mut repo_config,
        format!(
            "[commit]\n\tgpgsign = true\n[gpg]\n\tprogram = {}\n",
            signer.display()
        )
        .as_bytes(),
    )
    .unwrap();
    let result = call(
        &root,
        &home,
        &["--approve"],
        json!({"command": "git", "args": ["commit", "--allow-empty", "-m", "x"]}),
    );
    assert_eq!(result["profile"], "build", "{result}");
    let text = format!("{}{}", result["stdout"], result["stderr"]);
    assert!(text.contains("SIGNER name read ENOENT ENOENT"), "{result}");
}

/// A home beneath the sandbox's writable `/tmp` (this fixture's) is still
/// read-only: it is a mount of its own, remounted read-only, not a folder
/// of the writable `/tmp`.
#[test]
fn a_home_beneath_tmp_cannot_be_written() {
    if !namespaces_here() {
        return;
    }
    let (_work, root, home) = fixture();
    assert!(home.starts_with(std::env::temp_dir()), "{home:?}");
    let probes = [home.join("probe"), home.join(".cargo/bin/probe")];
    let script = format!(
        "const fs = require('fs'); const r = [];
        for (const p of {probes:?}) {{
            try {{ fs.writeFileSync(p, 'x'); r.push('wrote') }} catch (e) {{ r.push(e.code) }}
        }}
        console.log('WROTE ' + r.join(' '))"
    );
    let build = call(
        &root,
        &home,
        &["--approve"],
        json!({"command": "node", "args": ["-e", script]}),
    );
    assert_eq!(build["profile"], "build", "{build}");
    assert_eq!(build["stdout"], "WROTE EROFS EROFS\n", "{build}");
    assert!(probes.iter().all(|p| !p.exists()));
}

/// The paths `docs/security.md`'s allowlist table names (the first
/// backticked path of each row of the table under "What a child sees"),
/// with `~` made the home.
fn documented(home: &Path) -> Vec<PathBuf> {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/security.md"),
    )
    .unwrap();
    let table = doc
        .split("### What a child sees")
        .nth(1)
        .expect("docs/security.md has the allowlist table")
        .split("\n\n")
        .find(|block| block.trim_start().starts_with('|'))
        .unwrap();
    table
        .lines()
        .filter_map(|row| row.split('`').nth(1))
        .filter(|path| path.starts_with('/') || path.starts_with("~/"))
        .map(|path| match path.strip_prefix("~/") {
            Some(rest) => home.join(rest),
            None => PathBuf::from(path),
        })
        .collect()
}

/// Whether `path` begins with the components of `prefix`, where a `*`
/// component on either side stands for any one component.
fn begins_with(path: &Path, prefix: &Path) -> bool {
    let (mut path, mut prefix) = (path.components(), prefix.components());
    loop {
        match (prefix.next(), path.next()) {
            (None, _) => return true,
            (Some(_), None) => return false,
            (Some(a), Some(b)) => {
                let wild = |c: std::path::Component<'_>| c.as_os_str() == "*";
                if a != b && !wild(a) && !wild(b) {
                    return false;
                }
            }
        }
    }
}

#[test]
fn a_read_only_child_sees_exactly_the_documented_allowlist() {
    if !namespaces_here() {
        return;
    }
    // Outside the system's temporary folder where the build's is elsewhere:
    // a home beneath no writable place is a folder of the sandbox's root
    // (the other tests' homes, beneath `/tmp`, are a tmpfs of their own).
    let (_work, root, home) = fixture_in(Path::new(env!("CARGO_TARGET_TMPDIR")));
    // Walks everything from `/`, not entering the kernel's own folders,
    // the project nor `/usr` (shown whole: its tens of thousands of paths
    // would overflow the output kept); one path a line.
    plant_diff(
        &root,
        &format!(
            "const fs = require('fs'), path = require('path'); const out = [];
            const skip = new Set(['/proc', '/dev', '/sys', '/usr', {root:?}]);
            const walk = (dir, depth) => {{
                let names; try {{ names = fs.readdirSync(dir) }} catch (e) {{ return }}
                for (const n of names) {{
                    const p = path.join(dir, n); out.push(p);
                    let st; try {{ st = fs.lstatSync(p) }} catch (e) {{ continue }}
                    if (st.isDirectory() && !skip.has(p) && depth < 12 && out.length < 200000) walk(p, depth + 1);
                }}
            }};
            walk('/', 0); console.log('WALK\\n' + out.join('\\n'));",
            root = root.to_str().unwrap()
        ),
    );
    let result = call(
        &root,
        &home,
        &[],
        json!({"command": "git", "args": ["diff"]}),
    );
    assert_eq!(result["profile"], "read_only", "{result}");
    let stdout = result["stdout"].as_str().unwrap();
    let walked: Vec<&str> = stdout
        .split("WALK\n")
        .nth(1)
        .unwrap_or_else(|| panic!("the walk did not run: {result}"))
        .lines()
        .filter(|l| l.starts_with('/'))
        .collect();
    let mut allowed = documented(&home);
    assert!(allowed.contains(&PathBuf::from("/usr")), "{allowed:?}");
    assert!(
        allowed.contains(&PathBuf::from("/etc/passwd")),
        "{allowed:?}"
    );
    // Where the run happens: the project and the run's TMPDIR (bound at
    // their own paths), `/proc` and `/dev`.
    allowed.extend([root.clone(), PathBuf::from("/proc"), PathBuf::from("/dev")]);
    let tmpdir = walked
        .iter()
        .find(|p| p.starts_with("/tmp/corral-shell-") && p.ends_with("/tmp"))
        .map(PathBuf::from)
        .expect("the run's TMPDIR is there");
    allowed.push(tmpdir);
    // The table's `/tmp` is the private one, which holds nothing but what
    // is bound in it (the TMPDIR; the project and the home where they lie
    // beneath `/tmp`): taken whole, it would let anything of a home
    // beneath `/tmp` pass.
    allowed.retain(|path| path != Path::new("/tmp"));
    let mut unexpected = Vec::new();
    for path in &walked {
        let path = Path::new(path);
        let under = allowed.iter().any(|a| begins_with(path, a));
        let leads_to = allowed.iter().any(|a| begins_with(a, path));
        if !under && !leads_to {
            unexpected.push(path.display().to_string());
        }
    }
    assert!(
        unexpected.is_empty(),
        "seen but not in docs/security.md's allowlist: {unexpected:#?}"
    );
    // And the home holds only the toolchains' programs.
    for token in TOKENS {
        assert!(
            !walked.contains(&home.join(token).to_str().unwrap()),
            "{token}"
        );
    }
    assert!(walked.contains(&home.join(".cargo/bin").to_str().unwrap()));
}
