//! A domain off the egress allowlist, asked of the client's user.
//!
//! A command the server runs with the network (`--network`) reaches the
//! default registries and the `--allow-domain` names; for any other
//! domain the egress proxy asks this hook, which asks the client's user
//! through MCP elicitation ("Allow DOMAIN for the rest of this session?",
//! the domain shown with its hidden characters marked). The answer holds
//! for the session, as an app answer holds for its conversation: asked
//! once per domain, one question at a time. No answer within
//! [`QUESTION_WAIT`], or a command stopped while it waits, refuses. A
//! client without elicitation gets no hook, nor does a 2026-07-28 client
//! (its server sends no request, and a running command cannot wait for an
//! `input_required` round): the proxy refuses the domain with a hint
//! naming `--allow-domain`.

use crate::question::reveal;
use corral_tools::shell::{CancelToken, DomainAsk};
use rmcp::service::ElicitationMode;
use rmcp::service::{Peer, RoleServer};
use std::collections::HashMap;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long a connection waits for the user's answer before it is refused.
pub const QUESTION_WAIT: Duration = Duration::from_secs(120);

/// The user's answer about one domain.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct AllowDomain {
    /// Allow commands to reach this domain for the rest of the session.
    allow: bool,
}
rmcp::elicit_safe!(AllowDomain);

/// The session's answers, by domain. Held while a question is out, so
/// that commands meeting a domain at once get one question.
#[derive(Debug, Default)]
pub struct DomainAnswers(Mutex<HashMap<String, bool>>);

impl DomainAnswers {
    /// The hook for one command, when the client can be asked.
    pub(crate) fn hook(
        self: &Arc<Self>,
        peer: &Peer<RoleServer>,
        cancel: CancelToken,
    ) -> Option<DomainAsk> {
        if !peer
            .supported_elicitation_modes()
            .contains(&ElicitationMode::Form)
        {
            return None;
        }
        let (answers, peer) = (self.clone(), peer.clone());
        let runtime = tokio::runtime::Handle::try_current().ok()?;
        Some(Arc::new(move |domain: &str| {
            answers.ask(&runtime, &peer, &cancel, domain)
        }))
    }

    /// The session's answer about `domain`, asking the user if there is
    /// none yet. Runs on a proxy thread, never on the runtime.
    fn ask(
        &self,
        runtime: &tokio::runtime::Handle,
        peer: &Peer<RoleServer>,
        cancel: &CancelToken,
        domain: &str,
    ) -> bool {
        let mut answers = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(answer) = answers.get(domain) {
            return *answer;
        }
        let message = format!(
            "A command run with the network wants to reach `{}`, which is not on the network \
             allowlist. Allow commands to reach it for the rest of this session?",
            reveal(domain)
        );
        let (send, receive) = mpsc::channel();
        let asking = peer.clone();
        let question = runtime.spawn(async move {
            let answer = asking
                .elicit_with_timeout::<AllowDomain>(message, Some(QUESTION_WAIT))
                .await;
            let _ = send.send(answer);
        });
        let started = Instant::now();
        let answer = loop {
            match receive.recv_timeout(Duration::from_millis(100)) {
                Ok(Ok(Some(AllowDomain { allow }))) => break Some(allow),
                // Declined, dismissed, or no usable answer: refused, and
                // remembered only when the user said so.
                Ok(Err(
                    rmcp::service::ElicitationError::UserDeclined
                    | rmcp::service::ElicitationError::UserCancelled,
                )) => break Some(false),
                Ok(_) | Err(RecvTimeoutError::Disconnected) => break None,
                Err(RecvTimeoutError::Timeout)
                    if cancel.is_cancelled() || started.elapsed() >= QUESTION_WAIT =>
                {
                    question.abort();
                    break None;
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
        };
        if let Some(answer) = answer {
            answers.insert(domain.to_string(), answer);
        }
        answer.unwrap_or(false)
    }
}
