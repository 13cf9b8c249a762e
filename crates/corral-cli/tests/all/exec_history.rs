//! `corral-cli exec` when the history goes wrong on disk, as a flaky
//! machine has it: a full disk (a small tmpfs mounted over the history's
//! folder and filled), a database cut to half or written by a newer
//! Corral (moved aside: `--resume` says where, `corral-cli history
//! check|restore` get it back), a message whose JSON broke inside an
//! intact page, a lock that is a folder. The real binary against the
//! scripted server; the files changed byte by byte, as the disk would.

use crate::common::{Home, Scripted};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

impl Home {
    /// The app's data folder, where the history is.
    fn history_dir(&self) -> PathBuf {
        self.dir.path().join("data/dev.corral.desktop")
    }

    /// `corral-cli history ARGS...` in this home: its JSON answer.
    fn history_cli(&self, args: &[&str]) -> Value {
        let out = self
            .command(Command::new(env!("CARGO_BIN_EXE_corral-cli")), &[])
            .arg("history")
            .args(args)
            .output()
            .unwrap();
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert!(
            out.status.success(),
            "{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_str(&stdout).unwrap()
    }
}

/// A tmpfs of `size` mounted on `at`, unmounted when dropped.
struct Mounted(PathBuf);

impl Mounted {
    fn tmpfs(at: &Path, size: &str) -> Mounted {
        std::fs::create_dir_all(at).unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .status()
            .unwrap();
        assert!(status.success(), "mount a tmpfs (the tests run as root)");
        Mounted(at.to_path_buf())
    }

    /// Fills it: a file grown until the disk says it is full.
    fn fill(&self) {
        use std::io::Write;
        let mut filler = std::fs::File::create(self.0.join("filler")).unwrap();
        let block = vec![0u8; 4096];
        loop {
            match filler.write_all(&block).and_then(|()| filler.sync_all()) {
                Ok(()) => {}
                Err(e) if e.raw_os_error() == Some(28) => return,
                Err(e) => panic!("filling the tmpfs: {e}"),
            }
        }
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

fn final_of(events: &[Value]) -> &Value {
    let last = events.last().unwrap();
    assert_eq!(last["type"], "final", "{events:?}");
    last
}

#[test]
fn a_history_on_a_full_disk_is_not_reported_as_stored() {
    let server = Scripted::start(json!([{ "text": "An answer." }, { "text": "Another." }]));
    let home = Home::new(&server.base_url());
    let disk = Mounted::tmpfs(&home.history_dir(), "256k");
    disk.fill();
    let run = home.exec(&["--json", "Hello"]);
    let events = run.events();
    let last = final_of(&events);
    assert_eq!(run.code, 4, "{}", run.stdout);
    assert_eq!(last["outcome"], "done");
    assert_eq!(last["text"], "An answer.");
    assert_eq!(last["stored"], false);
    assert_eq!(last["store_error"]["code"], "io");
    assert!(
        last["store_error"]["message"]
            .as_str()
            .unwrap()
            .contains("full"),
        "{last}"
    );
    // Without --json: stderr says it.
    let plain = home.exec(&["Hello again"]);
    server.finish();
    assert_eq!(plain.code, 4, "{}", plain.stderr);
    assert!(
        plain
            .stderr
            .contains("the conversation could not be stored in the history"),
        "{}",
        plain.stderr
    );
    drop(disk);
}

/// Runs one task into the history; the conversation's id.
fn stored_conversation(home: &Home) -> String {
    let first = home.exec(&["--json", "First question"]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    let events = first.events();
    let last = final_of(&events);
    assert_eq!(last["stored"], true);
    last["conversation"].as_str().unwrap().to_string()
}

#[test]
fn resume_after_the_history_was_cut_to_half_says_it_was_moved_and_where() {
    let server = Scripted::start(json!([{ "text": "First answer." }]));
    let home = Home::new(&server.base_url());
    let id = stored_conversation(&home);
    server.finish();
    let db = home.history_dir().join("history.db");
    let bytes = std::fs::read(&db).unwrap();
    std::fs::write(&db, &bytes[..bytes.len() / 2]).unwrap();

    let run = home.exec(&["--json", "--resume", &id, "Go on"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let events = run.events();
    let error = &events[0]["error"];
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("the conversation history was damaged")
            && message.contains("history.corrupt-")
            && message.contains("a new one was started"),
        "{error}"
    );
    assert!(!message.contains("it may have been deleted"), "{error}");
    let moved = error["details"]["moved_to"].as_str().unwrap();
    assert!(Path::new(moved).is_file(), "{moved}");
    assert!(
        error["hint"]
            .as_str()
            .unwrap()
            .contains("corral-cli history check"),
        "{error}"
    );
    // `history check` finds the file in the data folder and says what it holds.
    let checked = home.history_cli(&["check"]);
    assert_eq!(checked[0]["file"], moved, "{checked}");
}

#[test]
fn a_history_from_a_newer_corral_is_named_and_restored_with_history_restore() {
    let server =
        Scripted::start(json!([{ "text": "First answer." }, { "text": "Second answer." }]));
    let home = Home::new(&server.base_url());
    let id = stored_conversation(&home);
    // The schema's version, as a newer Corral would have left it
    // (SQLite's user_version, at byte 60 of the header).
    let db = home.history_dir().join("history.db");
    let mut bytes = std::fs::read(&db).unwrap();
    bytes[60..64].copy_from_slice(&99u32.to_be_bytes());
    std::fs::write(&db, &bytes).unwrap();

    let run = home.exec(&["--json", "--resume", &id, "Second question"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let error = run.events()[0]["error"].clone();
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("is from a newer Corral") && message.contains("history.newer-"),
        "{error}"
    );
    let moved = error["details"]["moved_to"].as_str().unwrap().to_string();

    let checked = home.history_cli(&["check", &moved]);
    let found = &checked[0]["conversations"][0];
    assert_eq!(found["id"], id.as_str(), "{checked}");
    assert_eq!(found["entries"], 2, "{checked}");
    let restored = home.history_cli(&["restore", &moved]);
    assert_eq!(restored["conversations"][0]["entries"], 2, "{restored}");

    let resumed = home.exec(&["--json", "--resume", &id, "Second question"]);
    let requests = server.finish();
    assert_eq!(resumed.code, 0, "{}", resumed.stderr);
    let sent = requests.last().unwrap()["messages"].to_string();
    assert!(sent.contains("First answer."), "{sent}");
}

#[test]
fn a_message_broken_in_an_intact_page_costs_that_message_not_the_conversation() {
    let server =
        Scripted::start(json!([{ "text": "First answer." }, { "text": "Second answer." }]));
    let home = Home::new(&server.base_url());
    let id = stored_conversation(&home);
    // One byte of the stored reply's JSON changed, as a flipped bit would:
    // the page is whole, the message no longer parses.
    let db = home.history_dir().join("history.db");
    let mut bytes = std::fs::read(&db).unwrap();
    let needle = br#""type":"text","text":"First answer.""#;
    let at = bytes
        .windows(needle.len())
        .position(|w| w == needle)
        .expect("the reply is in the database file");
    bytes[at + needle.len() - 1] = b'\\';
    std::fs::write(&db, &bytes).unwrap();

    let run = home.exec(&["--json", "--resume", &id, "Second question"]);
    let requests = server.finish();
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(!run.stdout.contains("a bug in Corral"), "{}", run.stdout);
    let events = run.events();
    assert_eq!(final_of(&events)["text"], "Second answer.");
    let sent = requests.last().unwrap()["messages"].to_string();
    assert!(
        sent.contains("First question") && sent.contains("Second question"),
        "{sent}"
    );
    // The damaged entry is shown as damaged in the history, with what was there.
    let opened = home.history().open(&home.project_key(), &id).unwrap();
    let text = serde_json::to_string(&opened).unwrap();
    assert!(text.contains("is damaged in the history"), "{text}");
    assert!(text.contains("First answer."), "{text}");
}

#[test]
fn a_history_lock_that_is_a_folder_is_said_without_a_tools_hint() {
    let server = Scripted::start(json!([{ "text": "An answer." }]));
    let home = Home::new(&server.base_url());
    std::fs::create_dir_all(home.history_dir().join("history.lock")).unwrap();
    let run = home.exec(&["--json", "Hello"]);
    server.finish();
    let events = run.events();
    let last = final_of(&events);
    assert_eq!(run.code, 4, "{}", run.stdout);
    let error = &last["store_error"];
    assert_eq!(error["code"], "io", "{error}");
    assert!(
        error["message"].as_str().unwrap().contains("history.lock"),
        "{error}"
    );
    assert!(
        !error["hint"].as_str().unwrap().contains("list_directory"),
        "{error}"
    );
}
