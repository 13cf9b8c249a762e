//! What the CLI's test files share: `corral-cli` never given the user's
//! data folder, where it keeps checkpoints when no `--store` is passed;
//! the scripted LLM server and a user's home set up for it, which `exec`
//! and `acp` drive.

use corral_history::History;
use serde_json::{json, Value};
use std::io::BufRead;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};

/// The data folder the tests' `corral-cli` runs get: in the build's
/// temporary folder.
pub fn data_home() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("corral-cli-data")
}

/// `corral-cli`, with `data_home()` as its data folder.
pub fn corral_cli() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_corral-cli"));
    command.env("XDG_DATA_HOME", data_home());
    command
}

/// The scripted server (tests/exec/scripted.mjs over e2e/lib/llm-server.js).
pub struct Scripted {
    child: Child,
    out: BufReader<ChildStdout>,
    port: u16,
}

impl Scripted {
    /// Answers streamed requests with `turns`, in order (see scripted.mjs).
    pub fn start(turns: Value) -> Scripted {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/exec/scripted.mjs");
        let mut child = Command::new("node")
            .arg(script)
            .arg(turns.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("node runs the scripted server (scripts/setup.sh installs it)");
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        let port = serde_json::from_str::<Value>(&line).unwrap()["port"]
            .as_u64()
            .unwrap() as u16;
        Scripted { child, out, port }
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// Stops it; the bodies of the streamed requests it answered.
    pub fn finish(self) -> Vec<Value> {
        self.finish_with_keys().0
    }

    /// Stops it; the streamed requests' bodies and Authorization headers.
    pub fn finish_with_keys(mut self) -> (Vec<Value>, Vec<Value>) {
        drop(self.child.stdin.take());
        let mut line = String::new();
        self.out.read_line(&mut line).unwrap();
        self.child.wait().unwrap();
        let report: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(
            report["unexpected"],
            json!([]),
            "the server was asked what it did not expect"
        );
        let list = |key: &str| report[key].as_array().unwrap().clone();
        (list("requests"), list("authorizations"))
    }
}

/// A user's home with the app's settings pointing at `base_url`, and a
/// project folder beside it.
pub struct Home {
    pub dir: tempfile::TempDir,
}

impl Home {
    pub fn new(base_url: &str) -> Home {
        let home = Home {
            dir: tempfile::tempdir().unwrap(),
        };
        let config = home.dir.path().join("config/dev.corral.desktop");
        std::fs::create_dir_all(&config).unwrap();
        let settings = json!({
            "provider": "openai", "base_url": base_url, "model": "scripted",
            "max_tokens": 1024, "mode": "full_auto", "notifications": false,
        });
        std::fs::write(config.join("settings.json"), settings.to_string()).unwrap();
        std::fs::create_dir_all(home.project()).unwrap();
        std::fs::write(home.project().join("a.txt"), "hello from a.txt\n").unwrap();
        home
    }

    /// The project folder (its real path once made).
    pub fn project(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path().join("project"))
            .unwrap_or_else(|_| self.dir.path().join("project"))
    }

    /// The app's history, where the window reads it.
    pub fn history(&self) -> History {
        History::new(&self.dir.path().join("data/dev.corral.desktop"))
    }
}
