//! A session on a [`Project`], and a call taken through it as a window
//! takes it: checked into a ticket, then run with the user's answer.

use crate::Project;
use corral_session::approvals::Answer;
use corral_session::{Call, Consent, Fixed, Options, RunContext, Session, Settings, Ticket};
use corral_tools::policy::Mode;
use serde_json::Value;
use std::sync::Arc;

/// How a test opens its session: the host's fixed settings (or its own),
/// and the session's options (default: nothing watched, no index, no
/// checkpoints).
#[derive(Default)]
pub struct SessionBuilder {
    fixed: Fixed,
    settings: Option<Arc<dyn Settings>>,
    options: Options,
}

impl SessionBuilder {
    /// Ask mode, nothing added, default options.
    pub fn new() -> SessionBuilder {
        SessionBuilder::default()
    }

    /// Calls are judged in `mode`.
    pub fn mode(mut self, mode: Mode) -> SessionBuilder {
        self.fixed.mode = mode;
        self
    }

    /// Settings of the test's own (one that records what it is asked to save).
    pub fn settings(mut self, settings: Arc<dyn Settings>) -> SessionBuilder {
        self.settings = Some(settings);
        self
    }

    /// The session's options.
    pub fn options(mut self, options: Options) -> SessionBuilder {
        self.options = options;
        self
    }

    /// The session on `project`.
    pub fn open(self, project: &Project) -> Session {
        let settings = self
            .settings
            .unwrap_or_else(|| Arc::new(self.fixed) as Arc<dyn Settings>);
        Session::open(project.root(), settings, self.options).unwrap()
    }
}

/// The ticket of `tool` with `input` in `conversation`.
pub fn checked(session: &Session, tool: &str, input: Value, conversation: Option<&str>) -> Ticket {
    session.check(call(tool, input, conversation)).unwrap()
}

/// Checks `tool` with `input` (in `conversation`) into a ticket and runs it
/// with the user's `answer`, as the window does: the result, or the
/// standardized error's JSON (of the check or of the run).
pub async fn answered(
    session: &Session,
    tool: &str,
    input: Value,
    conversation: Option<&str>,
    answer: Answer,
) -> Result<Value, Value> {
    let ticket = session
        .check(call(tool, input, conversation))
        .map_err(|e| e.to_json())?;
    session
        .run(
            &ticket.ticket,
            Consent::Answer(answer),
            RunContext::default(),
        )
        .await
        .map_err(|e| e.to_json())
}

fn call(tool: &str, input: Value, conversation: Option<&str>) -> Call {
    Call {
        conversation: conversation.map(str::to_string),
        ..Call::new(tool, input)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn a_write_asked_about_runs_once_answered() {
        let project = Project::new().git();
        assert!(project.root().join(".git/HEAD").is_file());
        let session = SessionBuilder::new().mode(Mode::Ask).open(&project);
        let input = json!({"path": "a.txt", "content": "one\n"});
        let ticket = checked(&session, "write_file", input.clone(), None);
        assert!(
            matches!(
                ticket.check.check.decision,
                corral_tools::policy::Decision::Ask { .. }
            ),
            "{ticket:?}"
        );
        assert_eq!(project.read("a.txt"), None, "checking writes nothing");
        answered(&session, "write_file", input, None, Answer::once())
            .await
            .unwrap();
        assert_eq!(project.read("a.txt").as_deref(), Some("one\n"));
    }
}
