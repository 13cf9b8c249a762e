//! `corral-cli` as a user runs it: JSON on stdout, exit 0 or 1, never a panic.

use serde_json::{json, Value};
use std::io::Write;
use std::process::{Command, Stdio};

fn cli(args: &[&str], stdin: Option<&str>) -> (i32, Value) {
    let mut child = crate::common::corral_cli()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = child.stdin.take().unwrap();
    pipe.write_all(stdin.unwrap_or("").as_bytes()).unwrap();
    drop(pipe);
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let value: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {stdout}\nstderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap(), value)
}

#[test]
fn tools_prints_every_spec() {
    let (code, specs) = cli(&["tools"], None);
    assert_eq!(code, 0);
    let names: Vec<&str> = specs
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        vec![
            "read_file",
            "write_file",
            "edit_file",
            "delete_file",
            "list_directory",
            "glob",
            "search_files",
            "exec_shell",
            "command_output",
            "stop_command",
            "update_plan",
            "diagnostics",
            "symbols",
            "web_fetch",
            // The throwaway tool the tests register (feature `throwaway-tool`).
            "count_lines"
        ]
    );
    assert_eq!(specs[0]["risk"], "read");
    assert_eq!(specs[0]["input_schema"]["type"], "object");
}

/// `count_lines` is registered by one file and one registry line in
/// corral-tools; nothing in the CLI names it, yet it is specced, policed
/// and callable.
#[test]
fn a_tool_registered_in_one_place_is_listed_and_callable() {
    let (_, specs) = cli(&["tools"], None);
    let spec = specs
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "count_lines")
        .expect("count_lines is listed");
    assert_eq!(spec["risk"], "read");
    assert_eq!(spec["input_schema"]["required"], json!(["path"]));

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("three.txt"), "a\nb\nc\n").unwrap();
    let root = dir.path().to_str().unwrap();
    let call = |input: &str| cli(&["call", "--root", root, "count_lines", input], None);
    assert_eq!(
        call(r#"{"path":"three.txt"}"#),
        (0, json!({"path": "three.txt", "lines": 3}))
    );
    let (code, err) = call(r#"{"path":"../outside.txt"}"#);
    assert_eq!((code, err["code"].as_str()), (1, Some("path_outside_root")));
    let (code, err) = call(r#"{"path":"three.txt","extra":1}"#);
    assert_eq!((code, err["code"].as_str()), (1, Some("invalid_input")));
}

#[test]
fn call_writes_and_reads_with_input_from_argument_and_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let (code, out) = cli(
        &[
            "call",
            "--root",
            root,
            "write_file",
            r#"{"path":"a/b.txt","content":"hi\n"}"#,
        ],
        None,
    );
    assert_eq!(
        (code, out),
        (0, json!({"path": "a/b.txt", "bytes": 3, "created": true}))
    );
    let (code, out) = cli(
        &["call", "--root", root, "read_file"],
        Some(r#"{"path":"a/b.txt"}"#),
    );
    assert_eq!(code, 0);
    assert_eq!(out["content"], "hi\n");
}

#[test]
fn errors_are_standardized_json_with_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let cases: &[(&[&str], Option<&str>, &str)] = &[
        (
            &["call", "--root", root, "read_file", r#"{"path":"../x"}"#],
            None,
            "path_outside_root",
        ),
        (
            &["call", "--root", root, "read_file", "{not json"],
            None,
            "invalid_input",
        ),
        (
            &["call", "--root", root, "read_file", "[1]"],
            None,
            "invalid_input",
        ),
        (
            &["call", "--root", root, "read_file"],
            Some(""),
            "invalid_input",
        ),
        (
            &["call", "--root", root, "no_such_tool", "{}"],
            None,
            "invalid_input",
        ),
        (
            &[
                "call",
                "--root",
                "/definitely/not/here",
                "read_file",
                r#"{"path":"a"}"#,
            ],
            None,
            "not_found",
        ),
        (
            &[
                "call",
                "--root",
                root,
                "--mode",
                "yolo",
                "read_file",
                r#"{"path":"a"}"#,
            ],
            None,
            "invalid_input",
        ),
        (
            &[
                "call",
                "--root",
                root,
                "--mode",
                "ask",
                "write_file",
                r#"{"path":"a","content":""}"#,
            ],
            None,
            "approval_required",
        ),
        (
            &[
                "call",
                "--root",
                root,
                "--mode",
                "read_only",
                "--approve",
                "write_file",
                r#"{"path":"a","content":""}"#,
            ],
            None,
            "denied",
        ),
        (&["call", "read_file"], None, "invalid_input"),
        (&["frobnicate"], None, "invalid_input"),
    ];
    for (args, stdin, want) in cases {
        let (code, err) = cli(args, *stdin);
        assert_eq!(code, 1, "{args:?}");
        assert_eq!(err["code"], *want, "{args:?}: {err}");
        for key in ["message", "hint", "retryable", "details"] {
            assert!(err.get(key).is_some(), "{args:?} lacks {key}: {err}");
        }
    }
    assert!(!dir.path().join("a").exists());
}

#[test]
fn approve_grants_a_call_that_asks() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let (code, _) = cli(
        &[
            "call",
            "--root",
            root,
            "--mode",
            "ask",
            "--approve",
            "write_file",
            r#"{"path":"a","content":"x"}"#,
        ],
        None,
    );
    assert_eq!(code, 0);
    assert_eq!(std::fs::read(dir.path().join("a")).unwrap(), b"x");
}

/// `permission_denied` from the OS. Root reads every file, so as root the
/// call runs as `nobody` (through util-linux's `setpriv`).
#[test]
fn an_unreadable_file_is_permission_denied() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let file = dir.path().join("locked.txt");
    std::fs::write(&file, "x").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o000)).unwrap();
    let root = dir.path().to_str().unwrap();
    let cli_args = [
        "call",
        "--root",
        root,
        "read_file",
        r#"{"path":"locked.txt"}"#,
    ];
    // The file was created by this process: its owner is who we are.
    let as_root = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(&file).unwrap()) == 0;
    let mut command = if as_root {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(env!("CARGO_BIN_EXE_corral-cli"));
        c
    } else {
        crate::common::corral_cli()
    };
    let out = command.args(cli_args).output().unwrap();
    let value: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(value["code"], "permission_denied", "{value}");
    assert_eq!(value["details"]["path"], "locked.txt");
}

#[test]
fn boundaries_limit_writes_hide_blocked_paths_and_refuse_commands() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("tests")).unwrap();
    std::fs::create_dir_all(dir.path().join("private")).unwrap();
    std::fs::write(dir.path().join("private/notes.txt"), "needle\n").unwrap();
    std::fs::write(dir.path().join("src.txt"), "needle\n").unwrap();
    let root = dir.path().to_str().unwrap();
    let with = |extra: &[&str], name: &str, input: &str| {
        let mut args = vec!["call", "--root", root];
        args.extend_from_slice(extra);
        args.extend_from_slice(&[name, input]);
        cli(&args, None)
    };
    let tests_only = ["--writable", "tests"];
    let (code, out) = with(
        &tests_only,
        "write_file",
        r#"{"path":"tests/a.rs","content":"x"}"#,
    );
    assert_eq!((code, out["created"].clone()), (0, json!(true)));
    let (code, err) = with(
        &tests_only,
        "write_file",
        r#"{"path":"src.txt","content":"x"}"#,
    );
    assert_eq!((code, err["code"].clone()), (1, json!("denied")));
    let (code, err) = with(
        &tests_only,
        "exec_shell",
        r#"{"command":"touch","args":["x"]}"#,
    );
    assert_eq!((code, err["code"].clone()), (1, json!("denied")));
    let (code, _) = with(&tests_only, "exec_shell", r#"{"command":"ls","args":[]}"#);
    assert_eq!(code, 0);

    let blocked = ["--blocked", "private"];
    let (code, err) = with(&blocked, "read_file", r#"{"path":"private/notes.txt"}"#);
    assert_eq!((code, err["code"].clone()), (1, json!("denied")));
    let (code, out) = with(&blocked, "search_files", r#"{"query":"needle"}"#);
    assert_eq!(code, 0);
    assert_eq!(out["matches"].as_array().unwrap().len(), 1, "{out}");
    assert_eq!(out["matches"][0]["path"], "src.txt");
    let (code, out) = with(&blocked, "glob", r#"{"pattern":"*.txt"}"#);
    assert_eq!((code, out["files"].clone()), (0, json!(["src.txt"])));
    let (code, out) = with(&blocked, "list_directory", r#"{"depth":2}"#);
    assert_eq!(code, 0);
    assert!(!out.to_string().contains("private"), "{out}");
    let (code, err) = with(&blocked, "exec_shell", r#"{"command":"ls","args":[]}"#);
    assert_eq!((code, err["code"].clone()), (1, json!("denied")));
    // However the boundary is written, it is the same folder.
    let absolute = format!("{root}/private");
    for spelled in ["./private", "private/", absolute.as_str()] {
        let (code, err) = with(
            &["--blocked", spelled],
            "read_file",
            r#"{"path":"private/notes.txt"}"#,
        );
        assert_eq!(
            (code, err["code"].clone()),
            (1, json!("denied")),
            "{spelled}"
        );
    }
    let (code, err) = with(
        &["--blocked", "../elsewhere"],
        "read_file",
        r#"{"path":"src.txt"}"#,
    );
    assert_eq!((code, err["code"].clone()), (1, json!("path_outside_root")));
}

/// A root given as a relative path (`--root p`) must not make a path
/// argument that starts with the same name (`p/data.txt`) lose its first
/// component: inside the project, `p` is a link leading out.
#[test]
fn a_relative_root_does_not_shorten_path_arguments() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tmp.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("data.txt"), "TOPSECRET\n").unwrap();
    let project = tmp.path().join("p");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(project.join("data.txt"), "inside\n").unwrap();
    std::os::unix::fs::symlink(&outside, project.join("p")).unwrap();
    let out = crate::common::corral_cli()
        .current_dir(tmp.path())
        .args([
            "call",
            "--root",
            "p",
            "exec_shell",
            r#"{"command":"grep","args":["-H","","p/data.txt"]}"#,
        ])
        .output()
        .unwrap();
    let value: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(value["code"], "argument_not_allowed", "{value}");
    assert!(!value.to_string().contains("TOPSECRET"));
}
