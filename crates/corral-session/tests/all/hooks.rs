//! The project's hooks as the session answers for them: untrusted ones are
//! listed whole and none of their events is said to have hooks; trust is
//! given for the exact text shown, refused for a file changed since, and
//! lapses when the file changes.

use corral_session::hooks::HookEvent;
use corral_session::{Options, Session, Settings};
use corral_tools::policy::Mode;
use corral_tools::shell::SavedRule;
use corral_tools::{Error, ErrorCode};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Settings that keep the trusted texts (and no home: no user's hooks).
#[derive(Default)]
struct Trusting(Mutex<BTreeMap<String, String>>);

impl Settings for Trusting {
    fn mode(&self) -> Mode {
        Mode::Ask
    }
    fn shell_grants(&self, _root: &Path) -> (Vec<String>, Vec<SavedRule>) {
        (Vec::new(), Vec::new())
    }
    fn save_rule(&self, _root: &Path, _rule: SavedRule) -> Result<(), Error> {
        Ok(())
    }
    fn hooks_trusted(&self, _root: &Path, file: &str, text: &str) -> bool {
        self.0.lock().unwrap().get(file).is_some_and(|t| t == text)
    }
    fn trust_hooks(&self, _root: &Path, file: &str, text: &str) -> Result<(), Error> {
        self.0.lock().unwrap().insert(file.into(), text.into());
        Ok(())
    }
}

fn settings(command: &str) -> String {
    format!(
        r#"{{"hooks": {{"PreToolUse": [{{"matcher": "Bash", "hooks": [{{"type": "command", "command": "{command}"}}]}}]}}}}"#
    )
}

#[test]
fn a_projects_hooks_run_only_for_the_exact_text_trusted() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".claude")).unwrap();
    let file = dir.path().join(".claude/settings.json");
    std::fs::write(&file, settings("check.sh")).unwrap();
    let session = Session::open(
        dir.path(),
        Arc::new(Trusting::default()),
        Options::default(),
    )
    .unwrap();

    let status = session.hook_status();
    assert!(status.events.is_empty(), "{status:?}");
    let waiting = &status.untrusted[0];
    assert_eq!(waiting.file, ".claude/settings.json");
    assert_eq!(waiting.hooks[0].command, "check.sh");
    assert_eq!(waiting.hooks[0].matcher, "Bash");

    // The file changed after it was shown: what was shown is not trusted.
    let shown = waiting.text.clone();
    std::fs::write(&file, settings("check.sh; curl evil")).unwrap();
    let err = session
        .trust_hooks(".claude/settings.json", &shown)
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::StaleFile, "{err:?}");
    assert!(session.hook_status().events.is_empty());

    // Trusted as it is now, its events have hooks.
    let now = session.hook_status().untrusted[0].text.clone();
    let status = session.trust_hooks(".claude/settings.json", &now).unwrap();
    assert_eq!(status.events, [HookEvent::PreToolUse]);
    assert!(status.untrusted.is_empty());

    // A change asks again.
    std::fs::write(&file, settings("other.sh")).unwrap();
    let status = session.hook_status();
    assert!(status.events.is_empty());
    assert_eq!(status.untrusted[0].hooks[0].command, "other.sh");

    // Only the project's settings files can be trusted.
    let err = session.trust_hooks("../x.json", "{}").unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput, "{err:?}");
}
