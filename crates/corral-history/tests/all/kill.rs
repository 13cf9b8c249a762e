//! The history under SIGKILL, through the same store code the app runs:
//! a child process plays a conversation as the window stores it (the
//! user's message on Send, each reply when its stream ends, a round of
//! tool results) and forks it from random points, and is killed while it
//! does. On reopen, SQLite's integrity check passes, every entry and fork
//! the child saw acknowledged is there, and every fork that is there is a
//! whole copy of its original up to its fork point.

use corral_history::{History, NewEntry, TokenUsage};
use corral_llm::Message;
use serde_json::json;
use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::Path;

const P: &str = "/p/app";

fn entry(message: Message, kind: &str, text: &str, usage: bool) -> NewEntry {
    NewEntry {
        message: Some(message),
        items: vec![json!({"kind": kind, "id": format!("{kind}-{text}"), "text": text})],
        usage: usage.then_some(TokenUsage {
            input_tokens: 100,
            output_tokens: 10,
            ..TokenUsage::default()
        }),
    }
}

/// Run only as the child of the kill test: a conversation played and
/// forked until it is killed, printing each step once it has returned.
#[test]
#[ignore = "the child process of a_kill_while_replies_stream_and_forks_are_made_loses_nothing_acknowledged"]
fn child_conversation() {
    let dir = std::env::var_os("CORRAL_HISTORY_CHILD_DIR").expect("run by the kill test");
    let conversation = std::env::var("CORRAL_HISTORY_CHILD_CONVERSATION").unwrap();
    let mut state: u64 = std::env::var("CORRAL_HISTORY_CHILD_SEED")
        .unwrap()
        .parse()
        .unwrap();
    let mut random = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let history = History::new(Path::new(&dir));
    let mut out = std::io::stdout().lock();
    // A reply's text arrives in pieces; it is stored once its stream ends.
    let long = "a streamed line of the reply\n".repeat(4000);
    for turn in 0.. {
        let user = entry(
            Message::user(format!("question {turn}")),
            "user",
            &format!("q{turn}"),
            false,
        );
        let a = history.append(P, Some(&conversation), &user, "m").unwrap();
        writeln!(out, "appended {}", a.seq).unwrap();
        let mut reply = String::new();
        for piece in 0..(random() % 6) {
            reply.push_str(&format!("piece {piece} "));
        }
        reply.push_str(&long);
        let assistant = entry(
            Message::assistant(reply),
            "assistant",
            &format!("r{turn}"),
            true,
        );
        let a = history
            .append(P, Some(&conversation), &assistant, "m")
            .unwrap();
        writeln!(out, "appended {}", a.seq).unwrap();
        out.flush().unwrap();
        // Fork and resend, or fork from here: from a point before the end.
        let before = 1 + (random() % (a.seq as u64 + 1)) as i64;
        let fork = history.fork(P, &conversation, before).unwrap();
        writeln!(out, "forked {} {before}", fork.id).unwrap();
        let resent = entry(
            Message::user("said again"),
            "user",
            &format!("again{turn}"),
            false,
        );
        let a = history.append(P, Some(&fork.id), &resent, "m").unwrap();
        writeln!(out, "fork-appended {} {}", fork.id, a.seq).unwrap();
        out.flush().unwrap();
    }
}

/// The messages of a conversation, by seq, as stored.
fn messages(history: &History, id: &str) -> BTreeMap<i64, String> {
    history
        .open(P, id)
        .unwrap()
        .entries
        .iter()
        .map(|e| (e.seq, e.message.as_ref().unwrap().get().to_string()))
        .collect()
}

#[test]
fn a_kill_while_replies_stream_and_forks_are_made_loses_nothing_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let conversation = {
        let history = History::new(dir.path());
        let first = entry(Message::user("start"), "user", "start", false);
        let c = history.append(P, None, &first, "m").unwrap().conversation;
        history.close();
        c
    };
    let mut acknowledged_top = 0;
    let mut forks_seen: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    for round in 0..6u64 {
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "kill::child_conversation",
                "--exact",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("CORRAL_HISTORY_CHILD_DIR", dir.path())
            .env("CORRAL_HISTORY_CHILD_CONVERSATION", &conversation)
            .env(
                "CORRAL_HISTORY_CHILD_SEED",
                format!("{}", round * 7919 + 17),
            )
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let mut steps = 0;
        // A different number of steps each round, then a kill a few
        // milliseconds on: inside an append, a fork, or between them.
        let mut record = |line: &str, forks: &mut BTreeMap<String, (i64, i64)>| {
            let words: Vec<&str> = line.split(' ').collect();
            match words.as_slice() {
                ["appended", seq] => acknowledged_top = seq.parse().unwrap(),
                ["forked", id, before] => {
                    forks.insert(id.to_string(), (before.parse().unwrap(), -1));
                }
                ["fork-appended", id, seq] => {
                    forks.get_mut(*id).unwrap().1 = seq.parse().unwrap();
                }
                _ => {}
            }
        };
        while steps < 3 + round as usize * 3 {
            let line = lines.next().expect("the child stopped by itself").unwrap();
            record(&line, &mut forks_seen);
            steps += 1;
        }
        std::thread::sleep(std::time::Duration::from_millis(1 + round * 3));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        // Anything it printed before dying was done.
        for line in lines.map_while(Result::ok) {
            record(&line, &mut forks_seen);
        }

        let history = History::new(dir.path());
        assert_eq!(history.integrity_check().unwrap(), "ok", "round {round}");
        let original = messages(&history, &conversation);
        // Every acknowledged entry, in order, with no gap before it.
        let seqs: Vec<i64> = original.keys().copied().collect();
        assert_eq!(
            seqs[..=acknowledged_top as usize],
            (0..=acknowledged_top).collect::<Vec<_>>()[..],
            "round {round}"
        );
        // Every acknowledged fork is there; every fork there is whole.
        let listed = history.list(P).unwrap();
        for (id, (before, appended)) in &forks_seen {
            let fork = listed
                .iter()
                .find(|c| &c.id == id)
                .unwrap_or_else(|| panic!("round {round}: fork {id} lost"));
            assert_eq!(fork.forked_from.as_ref().unwrap().before_seq, *before);
            if *appended >= 0 {
                assert!(
                    messages(&history, id).contains_key(appended),
                    "round {round}"
                );
            }
        }
        for fork in listed.iter().filter(|c| c.forked_from.is_some()) {
            let point = fork.forked_from.as_ref().unwrap();
            let copied: BTreeMap<i64, String> = messages(&history, &fork.id)
                .into_iter()
                .filter(|(seq, _)| *seq < point.before_seq)
                .collect();
            let expected: BTreeMap<i64, String> = original
                .range(..point.before_seq)
                .map(|(k, v)| (*k, v.clone()))
                .collect();
            assert_eq!(copied, expected, "round {round}: fork {} is torn", fork.id);
        }
        history.close();
    }
    assert!(forks_seen.len() >= 3, "only {} forks", forks_seen.len());
}
