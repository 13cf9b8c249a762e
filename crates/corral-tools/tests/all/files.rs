//! The file tools on real temp folders: every tool, its output and its errors.
use crate::common::Project;
use pretty_assertions::assert_eq;
use serde_json::json;
use std::os::unix::fs::PermissionsExt;

#[test]
fn read_file_returns_whole_small_file() {
    let p = Project::new();
    p.write("src/a.txt", "one\ntwo\nthree\n");
    let out = p.call("read_file", json!({"path": "src/a.txt"})).unwrap();
    assert_eq!(
        out,
        json!({"path": "src/a.txt", "content": "one\ntwo\nthree\n", "start_line": 1,
               "end_line": 3, "total_lines": 3, "truncated": false})
    );
}

#[test]
fn read_file_windows_by_line_range() {
    let p = Project::new();
    p.write("a.txt", "1\n2\n3\n4\n5\n");
    let out = p
        .call(
            "read_file",
            json!({"path": "a.txt", "start_line": 2, "end_line": 3}),
        )
        .unwrap();
    assert_eq!(out["content"], "2\n3\n");
    assert_eq!(out["start_line"], 2);
    assert_eq!(out["end_line"], 3);
    // The asked range was delivered whole.
    assert_eq!(out["truncated"], false);
    // end_line past the end is clamped.
    let out = p
        .call(
            "read_file",
            json!({"path": "a.txt", "start_line": 4, "end_line": 99}),
        )
        .unwrap();
    assert_eq!(out["content"], "4\n5\n");
    assert_eq!(out["truncated"], false);
}

#[test]
fn read_file_large_file_is_read_in_windows_of_2000_lines() {
    let p = Project::new();
    let body: String = (1..=5000).map(|i| format!("line {i}\n")).collect();
    p.write("big.txt", &body);
    let out = p.call("read_file", json!({"path": "big.txt"})).unwrap();
    assert_eq!(out["end_line"], 2000);
    assert_eq!(out["total_lines"], 5000);
    assert_eq!(out["truncated"], true);
    assert!(out["hint"].as_str().unwrap().contains("start_line=2001"));
    let next = p
        .call("read_file", json!({"path": "big.txt", "start_line": 2001}))
        .unwrap();
    assert!(next["content"].as_str().unwrap().starts_with("line 2001\n"));
}

#[test]
fn read_file_caps_bytes_and_cuts_long_lines() {
    let p = Project::new();
    let long = "x".repeat(5000);
    p.write("long.txt", format!("{long}\nshort\n"));
    let out = p.call("read_file", json!({"path": "long.txt"})).unwrap();
    let content = out["content"].as_str().unwrap();
    assert!(
        content.contains("[line cut: 3000 more characters]"),
        "{content}"
    );
    assert!(content.ends_with("short\n"));
    assert_eq!(out["truncated"], true);

    // 200 lines of 1900 chars = 380 KB > 256 KiB: the window stops early.
    let wide: String = (0..200)
        .map(|_| format!("{}\n", "y".repeat(1900)))
        .collect();
    p.write("wide.txt", &wide);
    let out = p.call("read_file", json!({"path": "wide.txt"})).unwrap();
    let end = out["end_line"].as_u64().unwrap();
    assert!(end < 200 && end > 100, "{end}");
    assert!(out["content"].as_str().unwrap().len() <= 256 * 1024);
    assert_eq!(out["truncated"], true);
}

#[test]
fn read_file_strips_bom_keeps_crlf_and_refuses_binary() {
    let p = Project::new();
    p.write("bom.txt", b"\xEF\xBB\xBFhello\r\nworld\r\n");
    let out = p.call("read_file", json!({"path": "bom.txt"})).unwrap();
    assert_eq!(out["content"], "hello\r\nworld\r\n");
    p.write("bin.dat", b"\x7fELF\0\0\x01");
    assert_eq!(p.code("read_file", json!({"path": "bin.dat"})), "not_text");
    p.write("latin1.txt", b"caf\xe9\n");
    assert_eq!(
        p.code("read_file", json!({"path": "latin1.txt"})),
        "not_text"
    );
}

#[test]
fn read_file_errors() {
    let p = Project::new();
    p.write("a.txt", "a\n");
    std::fs::create_dir(p.path("dir")).unwrap();
    assert_eq!(
        p.code("read_file", json!({"path": "missing.txt"})),
        "not_found"
    );
    assert_eq!(p.code("read_file", json!({"path": "dir"})), "is_directory");
    assert_eq!(p.code("read_file", json!({"path": "."})), "is_directory");
    assert_eq!(
        p.code("read_file", json!({"path": "a.txt/x"})),
        "not_a_directory"
    );
    assert_eq!(
        p.code("read_file", json!({"path": "a.txt", "start_line": 0})),
        "invalid_input"
    );
    assert_eq!(
        p.code("read_file", json!({"path": "a.txt", "start_line": 5})),
        "invalid_input"
    );
    assert_eq!(
        p.code(
            "read_file",
            json!({"path": "a.txt", "start_line": 3, "end_line": 2})
        ),
        "invalid_input"
    );
    assert_eq!(p.code("read_file", json!({"path": ""})), "invalid_input");
    assert_eq!(p.code("read_file", json!({})), "invalid_input");
    assert_eq!(
        p.code("read_file", json!({"path": "a.txt", "bogus": 1})),
        "invalid_input"
    );
    assert_eq!(p.code("read_file", json!({"path": 7})), "invalid_input");
}

#[test]
fn read_file_refuses_fifo_without_blocking() {
    let p = Project::new();
    let fifo = p.path("pipe");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    assert_eq!(
        p.code("read_file", json!({"path": "pipe"})),
        "invalid_input"
    );
}

#[test]
fn read_file_unreadable_is_permission_denied() {
    if rustix::process::geteuid().is_root() {
        eprintln!("skipped: root reads every file");
        return;
    }
    let p = Project::new();
    p.write("locked.txt", "x");
    std::fs::set_permissions(p.path("locked.txt"), std::fs::Permissions::from_mode(0o000)).unwrap();
    assert_eq!(
        p.code("read_file", json!({"path": "locked.txt"})),
        "permission_denied"
    );
}

#[test]
fn write_file_creates_with_parents_and_replaces() {
    let p = Project::new();
    let out = p
        .call(
            "write_file",
            json!({"path": "a/b/c.txt", "content": "hi\n"}),
        )
        .unwrap();
    assert_eq!(
        out,
        json!({"path": "a/b/c.txt", "bytes": 3, "created": true})
    );
    assert_eq!(p.read("a/b/c.txt"), b"hi\n");
    let out = p
        .call("write_file", json!({"path": "a/b/c.txt", "content": "bye"}))
        .unwrap();
    assert_eq!(
        out,
        json!({"path": "a/b/c.txt", "bytes": 3, "created": false})
    );
    assert_eq!(p.read("a/b/c.txt"), b"bye");
    // No temp files left behind.
    let names: Vec<_> = std::fs::read_dir(p.path("a/b"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("c.txt")]);
}

#[test]
fn write_file_keeps_permissions() {
    let p = Project::new();
    p.write("run.sh", "#!/bin/sh\n");
    std::fs::set_permissions(p.path("run.sh"), std::fs::Permissions::from_mode(0o751)).unwrap();
    p.call(
        "write_file",
        json!({"path": "run.sh", "content": "#!/bin/sh\necho hi\n"}),
    )
    .unwrap();
    let mode = std::fs::metadata(p.path("run.sh"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o751);
}

#[test]
fn write_file_errors() {
    let p = Project::new();
    p.write("file.txt", "x");
    std::fs::create_dir(p.path("dir")).unwrap();
    assert_eq!(
        p.code("write_file", json!({"path": "dir", "content": ""})),
        "is_directory"
    );
    assert_eq!(
        p.code("write_file", json!({"path": ".", "content": ""})),
        "is_directory"
    );
    assert_eq!(
        p.code("write_file", json!({"path": "file.txt/x", "content": ""})),
        "not_a_directory"
    );
    assert_eq!(
        p.code("write_file", json!({"path": ".git/config", "content": ""})),
        "path_protected"
    );
    assert_eq!(
        p.code(
            "write_file",
            json!({"path": "sub/.GIT/hooks/pre-commit", "content": ""})
        ),
        "path_protected"
    );
    assert_eq!(
        p.code("write_file", json!({"path": "x.txt"})),
        "invalid_input"
    );
}

#[test]
fn write_file_through_symlink_writes_the_target_inside() {
    let p = Project::new();
    p.write("real.txt", "old");
    std::os::unix::fs::symlink("real.txt", p.path("link.txt")).unwrap();
    p.call("write_file", json!({"path": "link.txt", "content": "new"}))
        .unwrap();
    assert_eq!(p.read("real.txt"), b"new");
    assert!(std::fs::symlink_metadata(p.path("link.txt"))
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn edit_file_replaces_once_and_returns_diff() {
    let p = Project::new();
    p.write("a.rs", "fn main() {\n    println!(\"hi\");\n}\n");
    let out = p
        .call(
            "edit_file",
            json!({"path": "a.rs", "old_string": "\"hi\"", "new_string": "\"bye\""}),
        )
        .unwrap();
    assert_eq!(out["replacements"], 1);
    assert_eq!(
        out["diff"],
        "--- a/a.rs\n+++ b/a.rs\n@@ -1,3 +1,3 @@\n fn main() {\n-    println!(\"hi\");\n+    println!(\"bye\");\n }\n"
    );
    assert_eq!(p.read("a.rs"), b"fn main() {\n    println!(\"bye\");\n}\n");
}

#[test]
fn edit_file_keeps_crlf_bom_and_missing_trailing_newline() {
    let p = Project::new();
    p.write("w.txt", b"\xEF\xBB\xBFa\r\nb\r\nc");
    p.call(
        "edit_file",
        json!({"path": "w.txt", "old_string": "a\nb", "new_string": "A\nB\nB2"}),
    )
    .unwrap();
    assert_eq!(p.read("w.txt"), b"\xEF\xBB\xBFA\r\nB\r\nB2\r\nc");
    // A model that copied the CRLF works too.
    p.call(
        "edit_file",
        json!({"path": "w.txt", "old_string": "B\r\nB2", "new_string": "b"}),
    )
    .unwrap();
    assert_eq!(p.read("w.txt"), b"\xEF\xBB\xBFA\r\nb\r\nc");
}

#[test]
fn edit_file_ambiguous_lists_lines_and_replace_all_replaces_all() {
    let p = Project::new();
    p.write("a.txt", "x = 1\ny = 2\nx = 1\nz\nx = 1\n");
    let err = p
        .call(
            "edit_file",
            json!({"path": "a.txt", "old_string": "x = 1", "new_string": "x = 9"}),
        )
        .unwrap_err();
    assert_eq!(err.code.as_str(), "ambiguous_match");
    assert_eq!(err.details["lines"], json!([1, 3, 5]));
    assert!(err.message.contains("lines 1, 3, 5"), "{}", err.message);
    assert_eq!(p.read("a.txt"), b"x = 1\ny = 2\nx = 1\nz\nx = 1\n");
    let out = p
        .call(
            "edit_file",
            json!({"path": "a.txt", "old_string": "x = 1", "new_string": "x = 9", "replace_all": true}),
        )
        .unwrap();
    assert_eq!(out["replacements"], 3);
    assert_eq!(p.read("a.txt"), b"x = 9\ny = 2\nx = 9\nz\nx = 9\n");
}

#[test]
fn edit_file_many_matches_list_the_first_fifty_lines() {
    let p = Project::new();
    p.write("a.txt", "x\n".repeat(10_000));
    let err = p
        .call(
            "edit_file",
            json!({"path": "a.txt", "old_string": "x", "new_string": "y"}),
        )
        .unwrap_err();
    assert_eq!(err.code.as_str(), "ambiguous_match");
    assert_eq!(err.details["count"], 10_000);
    assert_eq!(err.details["lines"], json!((1..=50).collect::<Vec<_>>()));
    assert!(err.message.contains("48, 49, 50, …)"), "{}", err.message);
}

#[test]
fn edit_file_refuses_a_result_over_the_limit_before_building_it() {
    let p = Project::new();
    // 1 MiB of `a`, each replaced by 64 KiB: 64 GiB if it were built.
    p.write("a.txt", "a".repeat(1 << 20));
    let err = p
        .call(
            "edit_file",
            json!({"path": "a.txt", "old_string": "a", "new_string": "b".repeat(1 << 16), "replace_all": true}),
        )
        .unwrap_err();
    assert_eq!(err.code.as_str(), "too_large");
    assert_eq!(p.read("a.txt").len(), 1 << 20);
}

#[test]
fn edit_file_no_match_points_at_similar_lines() {
    let p = Project::new();
    p.write("a.py", "def f():\n    return 1\n");
    let err = p
        .call(
            "edit_file",
            json!({"path": "a.py", "old_string": "\treturn 1", "new_string": "\treturn 2"}),
        )
        .unwrap_err();
    assert_eq!(err.code.as_str(), "no_match");
    assert_eq!(err.details["similar_lines"], json!([2]));
    let err = p
        .call(
            "edit_file",
            json!({"path": "a.py", "old_string": "nothing like it", "new_string": "x"}),
        )
        .unwrap_err();
    assert_eq!(err.code.as_str(), "no_match");
    assert_eq!(p.read("a.py"), b"def f():\n    return 1\n");
}

#[test]
fn edit_file_errors() {
    let p = Project::new();
    p.write("a.txt", "abc");
    p.write("bin", b"a\0b");
    assert_eq!(
        p.code(
            "edit_file",
            json!({"path": "a.txt", "old_string": "", "new_string": "x"})
        ),
        "invalid_input"
    );
    assert_eq!(
        p.code(
            "edit_file",
            json!({"path": "a.txt", "old_string": "a", "new_string": "a"})
        ),
        "invalid_input"
    );
    assert_eq!(
        p.code(
            "edit_file",
            json!({"path": "nope", "old_string": "a", "new_string": "b"})
        ),
        "not_found"
    );
    assert_eq!(
        p.code(
            "edit_file",
            json!({"path": "bin", "old_string": "a", "new_string": "b"})
        ),
        "not_text"
    );
    assert_eq!(
        p.code(
            "edit_file",
            json!({"path": ".git/HEAD", "old_string": "a", "new_string": "b"})
        ),
        "path_protected"
    );
}

#[test]
fn delete_file_removes_files_and_links_only() {
    let p = Project::new();
    p.write("a.txt", "x");
    std::fs::create_dir(p.path("dir")).unwrap();
    std::os::unix::fs::symlink(p.outside("secret.txt"), p.path("out-link")).unwrap();
    assert_eq!(
        p.call("delete_file", json!({"path": "a.txt"})).unwrap(),
        json!({"path": "a.txt"})
    );
    assert!(!p.path("a.txt").exists());
    assert_eq!(p.code("delete_file", json!({"path": "a.txt"})), "not_found");
    assert_eq!(
        p.code("delete_file", json!({"path": "dir"})),
        "is_directory"
    );
    assert_eq!(p.code("delete_file", json!({"path": "."})), "is_directory");
    assert_eq!(
        p.code("delete_file", json!({"path": ".git/index"})),
        "path_protected"
    );
    // Removing a link never touches its target.
    p.call("delete_file", json!({"path": "out-link"})).unwrap();
    assert_eq!(
        std::fs::read(p.outside("secret.txt")).unwrap(),
        b"outside secret\n"
    );
}

#[test]
fn list_directory_depth_order_and_skips() {
    let p = Project::new();
    p.write("b.txt", "12345");
    p.write("a/x.rs", "");
    p.write("a/deep/y.rs", "");
    p.write(".git/HEAD", "ref");
    p.write("node_modules/pkg/index.js", "");
    p.write("target/debug/app", "");
    std::os::unix::fs::symlink("b.txt", p.path("link")).unwrap();
    let out = p.call("list_directory", json!({})).unwrap();
    assert_eq!(
        out,
        json!({"path": ".", "truncated": false, "entries": [
            {"path": "a", "kind": "dir"},
            {"path": "b.txt", "kind": "file", "size": 5},
            {"path": "link", "kind": "symlink"},
            {"path": "node_modules", "kind": "dir"},
            {"path": "target", "kind": "dir"},
        ]})
    );
    let out = p.call("list_directory", json!({"depth": 3})).unwrap();
    let paths: Vec<&str> = out["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        vec![
            "a",
            "a/deep",
            "a/deep/y.rs",
            "a/x.rs",
            "b.txt",
            "link",
            "node_modules",
            "target"
        ]
    );
    let out = p.call("list_directory", json!({"path": "a"})).unwrap();
    assert_eq!(out["entries"].as_array().unwrap().len(), 2);
}

#[test]
fn list_directory_caps_and_errors() {
    let p = Project::new();
    for i in 0..1100 {
        p.write(&format!("many/f{i:04}"), "");
    }
    let out = p.call("list_directory", json!({"path": "many"})).unwrap();
    assert_eq!(out["entries"].as_array().unwrap().len(), 1000);
    assert_eq!(out["truncated"], true);
    p.write("f.txt", "");
    assert_eq!(
        p.code("list_directory", json!({"path": "f.txt"})),
        "not_a_directory"
    );
    assert_eq!(
        p.code("list_directory", json!({"path": "nope"})),
        "not_found"
    );
    assert_eq!(
        p.code("list_directory", json!({"depth": 0})),
        "invalid_input"
    );
    assert_eq!(
        p.code("list_directory", json!({"depth": 6})),
        "invalid_input"
    );
}

#[test]
fn unknown_tool_is_invalid_input() {
    let p = Project::new();
    let err = p.call("rm_rf", json!({})).unwrap_err();
    assert_eq!(err.code.as_str(), "invalid_input");
    assert!(err.hint.contains("read_file"));
}
