//! The approval card's preview is computed by the code that writes: for any
//! file and any edit, the preview's diff applied to the old bytes is what
//! the tool then writes, and a preview fails exactly when the call would.
use crate::common::Project;
use corral_tools::dispatch::{self, CallContext};
use corral_tools::fs::Preview;
use corral_tools::policy::{Approval, Decision, Mode};
use corral_tools::Error;
use pretty_assertions::assert_eq;
use proptest::prelude::*;
use serde_json::{json, Value};

/// The preview of a call, checked in `ask` mode as the app checks it.
fn preview(p: &Project, tool: &str, input: &Value) -> Result<Option<Preview>, Error> {
    let ctx = CallContext::new(Mode::Ask, Approval::None);
    let check = dispatch::check(&p.root, tool, input, &ctx).unwrap();
    match check.preview_error {
        Some(e) => Err(e),
        None => Ok(check.preview),
    }
}

/// Applies a unified diff (as `diff -u` and the tools write it, with `\ No
/// newline at end of file` markers) to `old`. Panics on a hunk that does
/// not fit: a preview whose diff does not apply is a broken preview.
fn apply(old: &str, diff: &str) -> String {
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let mut out = String::new();
    let mut at = 0; // next old line to copy
    let mut lines = diff.split_inclusive('\n').peekable();
    // Header lines.
    while lines.peek().is_some_and(|l| !l.starts_with("@@")) {
        lines.next();
    }
    while let Some(header) = lines.next() {
        let ranges = header.strip_prefix("@@ -").unwrap();
        let old_start: usize = ranges.split([',', ' ']).next().unwrap().parse().unwrap();
        // An empty old range starts *after* line `old_start`.
        let old_empty = ranges.split(' ').next().unwrap().ends_with(",0");
        let start = if old_empty { old_start } else { old_start - 1 };
        out.extend(old_lines[at..start].iter().copied());
        at = start;
        let mut last_new: Option<usize> = None; // byte offset of the last line added to out
        let mut last_was_old = false;
        while let Some(line) = lines.peek().copied() {
            if line.starts_with("@@") {
                break;
            }
            lines.next();
            let (mark, text) = line.split_at(1);
            match mark {
                " " => {
                    assert_eq!(
                        old_lines[at].trim_end_matches('\n'),
                        text.trim_end_matches('\n')
                    );
                    last_new = Some(out.len());
                    out.push_str(old_lines[at]);
                    at += 1;
                    last_was_old = false;
                }
                "-" => {
                    assert_eq!(
                        old_lines[at].trim_end_matches('\n'),
                        text.trim_end_matches('\n')
                    );
                    at += 1;
                    last_was_old = true;
                }
                "+" => {
                    last_new = Some(out.len());
                    out.push_str(text);
                    last_was_old = false;
                }
                "\\" => {
                    // The line before has no newline in the file it belongs to.
                    if !last_was_old {
                        if let Some(from) = last_new {
                            if out[from..].ends_with('\n') {
                                out.pop();
                            }
                        }
                    }
                }
                other => panic!("unexpected diff line {other:?}{text:?}"),
            }
        }
    }
    out.extend(old_lines[at..].iter().copied());
    out
}

/// Previews an edit, runs it, and checks that the two agree byte for byte.
fn preview_is_what_is_written(p: &Project, old_bytes: &[u8], input: Value) {
    p.write("f.txt", old_bytes);
    let shown = preview(p, "edit_file", &input);
    let ran = p.call("edit_file", input.clone());
    let written = p.read("f.txt");
    match (shown, ran) {
        (Ok(Some(preview)), Ok(_)) => {
            assert_eq!(preview.before.as_bytes(), old_bytes, "{input}");
            assert_eq!(preview.after.as_bytes(), written.as_slice(), "{input}");
            let before = String::from_utf8(old_bytes.to_vec()).unwrap();
            assert_eq!(
                apply(&before, &preview.diff).as_bytes(),
                written.as_slice(),
                "{input}\n{}",
                preview.diff
            );
        }
        (Err(shown), Err(ran)) => {
            assert_eq!(shown, ran, "{input}");
            assert_eq!(written, old_bytes, "a failed edit changes nothing");
        }
        (shown, ran) => panic!("preview {shown:?} but the edit {ran:?} ({input})"),
    }
}

/// Text made of a few short words and line ends of every kind.
fn content() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        Just("a".to_string()),
        Just("b".to_string()),
        Just("fn x".to_string()),
        Just(" ".to_string()),
        Just("é".to_string()),
        Just("\n".to_string()),
        Just("\r\n".to_string()),
        Just("\r".to_string()),
    ];
    (
        any::<bool>(),
        prop::collection::vec(piece, 0..40),
        prop_oneof![Just(""), Just("\n"), Just("\r\n")],
        any::<bool>(),
    )
        .prop_map(|(bom, pieces, end, crlf_only)| {
            let mut body: String = pieces.concat();
            body.push_str(end);
            if crlf_only {
                // A consistent CRLF file, the case the tool converts.
                body = body
                    .replace("\r\n", "\n")
                    .replace('\r', "")
                    .replace('\n', "\r\n");
            }
            let mut bytes = if bom {
                b"\xEF\xBB\xBF".to_vec()
            } else {
                Vec::new()
            };
            bytes.extend_from_slice(body.as_bytes());
            bytes
        })
}

/// A replacement: usually a piece of the file (so it matches), sometimes
/// with its line ends changed, sometimes anything.
fn edit_of(bytes: &[u8]) -> impl Strategy<Value = (String, String, bool)> {
    let text = String::from_utf8_lossy(bytes)
        .trim_start_matches('\u{feff}')
        .to_string();
    let bounds: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect();
    let n = bounds.len();
    (
        0..n,
        0..n,
        0..4u8,
        prop::collection::vec(
            prop_oneof![Just("x"), Just("\n"), Just("\r\n"), Just("a")],
            0..6,
        ),
        any::<bool>(),
    )
        .prop_map(move |(i, j, how, new, all)| {
            let (from, to) = (bounds[i.min(j)], bounds[i.max(j)]);
            let piece = text[from..to].to_string();
            let old = match how {
                0 | 1 => piece,
                2 => piece.replace("\r\n", "\n"),
                _ => "fn x\n".to_string(),
            };
            (old, new.concat(), all)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn the_preview_applied_to_the_old_bytes_is_what_edit_file_writes(
        (bytes, (old, new, all)) in content().prop_flat_map(|b| {
            let edit = edit_of(&b);
            (Just(b), edit)
        })
    ) {
        let p = Project::new();
        preview_is_what_is_written(
            &p,
            &bytes,
            json!({"path": "f.txt", "old_string": old, "new_string": new, "replace_all": all}),
        );
    }
}

/// A file with both CRLF and LF line ends is not a CRLF file: the edit
/// matches its text as it is, and the preview shows exactly that (the UI
/// once treated any `\r\n` as CRLF and previewed a different result).
#[test]
fn a_mixed_line_end_file_is_previewed_as_it_is_edited() {
    let p = Project::new();
    let old = b"one\r\ntwo\nthree\r\n";
    // A LF old_string across a CRLF line end does not match a mixed file.
    preview_is_what_is_written(
        &p,
        old,
        json!({"path": "f.txt", "old_string": "one\ntwo", "new_string": "1\n2"}),
    );
    let err = preview(
        &p,
        "edit_file",
        &json!({"path": "f.txt", "old_string": "one\ntwo", "new_string": "1\n2"}),
    )
    .unwrap_err();
    assert_eq!(err.code.as_str(), "no_match");
    // Within a line it does, and the other line ends stay as they were.
    preview_is_what_is_written(
        &p,
        old,
        json!({"path": "f.txt", "old_string": "two\n", "new_string": "2\nzwei\n"}),
    );
    assert_eq!(p.read("f.txt"), b"one\r\n2\nzwei\nthree\r\n");
}

/// A consistent CRLF file keeps CRLF, in the preview as on disk.
#[test]
fn a_crlf_file_is_previewed_with_its_crlf() {
    let p = Project::new();
    p.write("f.txt", "\u{feff}a\r\nb\r\n");
    let input = json!({"path": "f.txt", "old_string": "a\nb", "new_string": "a\nc"});
    let preview = preview(&p, "edit_file", &input).unwrap().unwrap();
    assert_eq!(
        preview,
        Preview {
            path: "f.txt".into(),
            before: "\u{feff}a\r\nb\r\n".into(),
            after: "\u{feff}a\r\nc\r\n".into(),
            diff: "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n \u{feff}a\r\n-b\r\n+c\r\n".into(),
            base: corral_tools::fs::base_of(Some("\u{feff}a\r\nb\r\n".as_bytes())),
        }
    );
    p.call("edit_file", input).unwrap();
    assert_eq!(p.read("f.txt"), preview.after.as_bytes());
}

/// `old_string == new_string` is refused by the edit, so its preview is the
/// same refusal (the UI once showed an empty diff for it).
#[test]
fn an_edit_that_changes_nothing_has_no_preview_but_the_error() {
    let p = Project::new();
    p.write("f.txt", "same\n");
    let input = json!({"path": "f.txt", "old_string": "same", "new_string": "same"});
    let shown = preview(&p, "edit_file", &input).unwrap_err();
    let ran = p.call("edit_file", input).unwrap_err();
    assert_eq!(shown, ran);
    assert_eq!(shown.code.as_str(), "invalid_input");
    assert_eq!(p.read("f.txt"), b"same\n");
}

#[test]
fn write_and_delete_previews_show_the_whole_change() {
    let p = Project::new();
    p.write("old.txt", "keep\r\n");
    let write = json!({"path": "new/a.txt", "content": "hi\n"});
    assert_eq!(
        preview(&p, "write_file", &write).unwrap().unwrap(),
        Preview {
            path: "new/a.txt".into(),
            before: String::new(),
            after: "hi\n".into(),
            diff: "--- a/new/a.txt\n+++ b/new/a.txt\n@@ -0,0 +1 @@\n+hi\n".into(),
            base: "absent".into(),
        }
    );
    assert!(!p.path("new").exists(), "a preview creates nothing");
    let delete = json!({"path": "old.txt"});
    assert_eq!(
        preview(&p, "delete_file", &delete).unwrap().unwrap(),
        Preview {
            path: "old.txt".into(),
            before: "keep\r\n".into(),
            after: String::new(),
            diff: "--- a/old.txt\n+++ b/old.txt\n@@ -1 +0,0 @@\n-keep\r\n".into(),
            base: corral_tools::fs::base_of(Some(b"keep\r\n")),
        }
    );
    assert!(p.path("old.txt").exists(), "a preview deletes nothing");
    // A write into .git/ fails in the preview as it would in the write.
    let git = json!({"path": ".git/config", "content": "x"});
    assert_eq!(
        preview(&p, "write_file", &git).unwrap_err(),
        p.call("write_file", git).unwrap_err()
    );
}

#[test]
fn reads_and_denied_calls_have_no_preview() {
    let p = Project::new();
    p.write("a.txt", "x\n");
    assert_eq!(
        preview(&p, "read_file", &json!({"path": "a.txt"})).unwrap(),
        None
    );
    let ctx = CallContext::new(Mode::ReadOnly, Approval::None);
    let check = dispatch::check(
        &p.root,
        "write_file",
        &json!({"path": "a.txt", "content": "y"}),
        &ctx,
    )
    .unwrap();
    assert!(matches!(check.decision, Decision::Deny { .. }), "{check:?}");
    assert_eq!((check.preview, check.preview_error), (None, None));
}

/// Runs `tool` approved, with the base of the preview the user saw.
fn call_over(p: &Project, tool: &str, input: Value, base: &str) -> Result<Value, Error> {
    let mut ctx = CallContext::new(Mode::Ask, Approval::Granted);
    ctx.base = Some(base.to_string());
    dispatch::call(&p.root, tool, input, &ctx)
}

#[test]
fn a_file_changed_after_its_preview_is_not_written() {
    // (tool, input, the file before the check or None, what changes it after)
    let cases: [(&str, Value, Option<&str>, Option<&str>); 6] = [
        (
            "write_file",
            json!({"path": "f.txt", "content": "new\n"}),
            Some("old\n"),
            Some("other\n"),
        ),
        (
            "write_file",
            json!({"path": "f.txt", "content": "new\n"}),
            None,
            Some("other\n"),
        ),
        (
            "write_file",
            json!({"path": "f.txt", "content": "new\n"}),
            Some("old\n"),
            None,
        ),
        (
            "edit_file",
            json!({"path": "f.txt", "old_string": "a", "new_string": "b"}),
            Some("a 1\n"),
            Some("a 2\n"),
        ),
        (
            "delete_file",
            json!({"path": "f.txt"}),
            Some("old\n"),
            Some("other\n"),
        ),
        // The same size and the same second: only the bytes tell.
        (
            "edit_file",
            json!({"path": "f.txt", "old_string": "a", "new_string": "b"}),
            Some("a 1\n"),
            Some("a 9\n"),
        ),
    ];
    for (tool, input, before, after) in cases {
        let p = Project::new();
        if let Some(text) = before {
            p.write("f.txt", text);
        }
        let shown = preview(&p, tool, &input).unwrap().unwrap();
        match after {
            Some(text) => p.write("f.txt", text),
            None => std::fs::remove_file(p.path("f.txt")).unwrap(),
        }
        let err = call_over(&p, tool, input.clone(), &shown.base).unwrap_err();
        assert_eq!(err.code.as_str(), "stale_file", "{tool} {input}: {err:?}");
        assert_eq!(err.details["path"], "f.txt");
        // Nothing was written: the file is what the change after the
        // check left.
        match after {
            Some(text) => assert_eq!(p.read("f.txt"), text.as_bytes(), "{tool} {input}"),
            None => assert!(!p.path("f.txt").exists(), "{tool} {input}"),
        }
    }
}

#[test]
fn an_unchanged_file_is_written_as_previewed() {
    let cases = [
        ("write_file", json!({"path": "f.txt", "content": "new\n"})),
        ("write_file", json!({"path": "g.txt", "content": "new\n"})),
        (
            "edit_file",
            json!({"path": "f.txt", "old_string": "old", "new_string": "new"}),
        ),
        ("delete_file", json!({"path": "f.txt"})),
    ];
    for (tool, input) in cases {
        let p = Project::new();
        p.write("f.txt", "old\n");
        let shown = preview(&p, tool, &input).unwrap().unwrap();
        call_over(&p, tool, input.clone(), &shown.base).unwrap();
        let path = p.path(&shown.path);
        match tool {
            "delete_file" => assert!(!path.exists()),
            _ => assert_eq!(
                std::fs::read(path).unwrap(),
                shown.after.as_bytes(),
                "{input}"
            ),
        }
    }
    // A symlink replacing the file after the check is not the file shown.
    let p = Project::new();
    p.write("f.txt", "old\n");
    p.write("g.txt", "old\n");
    let input = json!({"path": "f.txt"});
    let shown = preview(&p, "delete_file", &input).unwrap().unwrap();
    std::fs::remove_file(p.path("f.txt")).unwrap();
    std::os::unix::fs::symlink("g.txt", p.path("f.txt")).unwrap();
    let err = call_over(&p, "delete_file", input, &shown.base).unwrap_err();
    assert_eq!(err.code.as_str(), "stale_file");
    assert!(p
        .path("f.txt")
        .symlink_metadata()
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn a_new_file_shown_is_not_written_over_what_appeared_at_its_path() {
    // What lands at the path of a new file after its preview: a file, a
    // symlink to another project file, a symlink to where nothing is yet.
    for plant in ["file", "symlink", "dangling symlink"] {
        let p = Project::new();
        p.write("g.txt", "other\n");
        let input = json!({"path": "f.txt", "content": "mine\n"});
        let shown = preview(&p, "write_file", &input).unwrap().unwrap();
        assert_eq!(shown.base, "absent");
        match plant {
            "file" => p.write("f.txt", "theirs\n"),
            "symlink" => std::os::unix::fs::symlink("g.txt", p.path("f.txt")).unwrap(),
            _ => std::os::unix::fs::symlink("h.txt", p.path("f.txt")).unwrap(),
        }
        let err = call_over(&p, "write_file", input, &shown.base).unwrap_err();
        assert_eq!(err.code.as_str(), "stale_file", "{plant}: {err:?}");
        assert_eq!(p.read("g.txt"), b"other\n", "{plant}");
        assert!(!p.path("h.txt").exists(), "{plant}");
        match plant {
            "file" => assert_eq!(p.read("f.txt"), b"theirs\n"),
            _ => assert!(p
                .path("f.txt")
                .symlink_metadata()
                .unwrap()
                .file_type()
                .is_symlink()),
        }
    }
}
