//! The user's answers about domains off the egress allowlist. A command the
//! user let use the network that connects to another domain waits while
//! the window asks "Allow <domain> in this conversation" or "Refuse"; the
//! answer holds for the conversation (asked once per domain), and ends
//! with it, as its grants do. No answer within the wait refuses; a
//! stopped command drops its question (a background command too: its
//! stop switch is the call's). Connections that meet the same domain while
//! it is being asked about wait for that one answer: one question, not one
//! per connection.

use corral_tools::shell::{CancelToken, DomainAsk, OutputSink, Stream};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// How long a connection waits for the user's answer before it is refused.
pub const QUESTION_WAIT: Duration = Duration::from_secs(120);

/// What the window is told: a question to show, or one to take down
/// (answered, timed out, or its command stopped). A remote project's
/// session sends it over its connection, where it is read back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DomainQuestion {
    Asked {
        id: String,
        conversation: String,
        domain: String,
    },
    Closed {
        id: String,
    },
}

/// Where the window hears of questions.
pub type Notify = Arc<dyn Fn(DomainQuestion) + Send + Sync>;

/// The answers of each conversation, and the questions waiting.
#[derive(Default)]
pub struct DomainAnswers {
    /// By the window's key of the conversation, then by domain.
    answers: Mutex<HashMap<String, HashMap<String, bool>>>,
    /// The questions waiting for the window, by id.
    waiting: Mutex<HashMap<String, mpsc::Sender<bool>>>,
    /// What is being asked about now, by conversation and domain.
    in_question: Mutex<HashSet<(String, String)>>,
    /// Where the window listens (`domain_questions`), once it does.
    window: Mutex<Option<Notify>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// How the hook of one command asks: for which conversation, where the
/// question goes, what stops it, where its waiting is told, how long.
pub struct Asking {
    pub conversation: String,
    pub notify: Notify,
    pub cancel: CancelToken,
    pub on_output: Option<OutputSink>,
    /// The app passes [`QUESTION_WAIT`]; tests a shorter one.
    pub wait: Duration,
}

impl DomainAnswers {
    /// The egress proxy's hook for one command of a conversation.
    pub fn hook(self: &Arc<Self>, asking: Asking) -> DomainAsk {
        let answers = self.clone();
        Arc::new(move |domain: &str| answers.ask(&asking, domain))
    }

    /// The conversation's answer about `domain`, asking the window if
    /// there is none yet and no other connection is asking already (then
    /// its answer is this one's).
    fn ask(&self, asking: &Asking, domain: &str) -> bool {
        let started = Instant::now();
        let key = (asking.conversation.clone(), domain.to_string());
        loop {
            if let Some(answer) = self.answer(&asking.conversation, domain) {
                return answer;
            }
            if asking.cancel.is_cancelled() || started.elapsed() >= asking.wait {
                return false;
            }
            if lock(&self.in_question).insert(key.clone()) {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // The one asking may have answered between the look and the claim
        // (it records the answer before it lets go).
        let answer = match self.answer(&asking.conversation, domain) {
            Some(answer) => answer,
            None => self.ask_window(asking, domain, started),
        };
        lock(&self.in_question).remove(&key);
        answer
    }

    /// Asks the window about `domain` and waits for the answer, the
    /// command's stop, or the end of the wait begun at `started`.
    fn ask_window(&self, asking: &Asking, domain: &str, started: Instant) -> bool {
        let id = uuid::Uuid::new_v4().to_string();
        let (send, receive) = mpsc::channel();
        lock(&self.waiting).insert(id.clone(), send);
        (asking.notify)(DomainQuestion::Asked {
            id: id.clone(),
            conversation: asking.conversation.clone(),
            domain: domain.to_string(),
        });
        let answer = loop {
            // Short waits, so that a stopped command drops its question.
            match receive.recv_timeout(Duration::from_millis(100)) {
                Ok(answer) => {
                    lock(&self.answers)
                        .entry(asking.conversation.clone())
                        .or_default()
                        .insert(domain.to_string(), answer);
                    break answer;
                }
                Err(RecvTimeoutError::Disconnected) => break false,
                Err(RecvTimeoutError::Timeout) if asking.cancel.is_cancelled() => break false,
                Err(RecvTimeoutError::Timeout) if started.elapsed() >= asking.wait => {
                    if let Some(sink) = &asking.on_output {
                        let line = format!(
                            "corral proxy: no answer about {domain} within {:?}; refused\n",
                            asking.wait
                        );
                        sink(Stream::Stderr, line.as_bytes());
                    }
                    break false;
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
        };
        lock(&self.waiting).remove(&id);
        (asking.notify)(DomainQuestion::Closed { id });
        answer
    }

    /// What the conversation answered about `domain`, if it was asked.
    pub fn answer(&self, conversation: &str, domain: &str) -> Option<bool> {
        lock(&self.answers)
            .get(conversation)
            .and_then(|domains| domains.get(domain).copied())
    }

    /// The user's answer to question `id`; `false` if none is waiting
    /// (answered already, timed out, or its command stopped).
    pub fn respond(&self, id: &str, allow: bool) -> bool {
        lock(&self.waiting)
            .remove(id)
            .is_some_and(|send| send.send(allow).is_ok())
    }

    /// The window listens here from now on (a reloaded window replaces
    /// its former self).
    pub fn listen(&self, window: Notify) {
        *lock(&self.window) = Some(window);
    }

    /// Whether a window listens (a host without one asks nothing: a
    /// domain off the allowlist is refused at once).
    pub fn listening(&self) -> bool {
        lock(&self.window).is_some()
    }

    /// Tells the window, if one listens; else the question waits out
    /// its time and is refused.
    pub fn tell(&self, question: DomainQuestion) {
        let window = lock(&self.window).clone();
        if let Some(window) = window {
            window(question);
        }
    }

    /// The conversation ended: its answers go.
    pub fn end(&self, conversation: &str) {
        lock(&self.answers).remove(conversation);
    }

    /// The project closed: every conversation's answers go.
    pub fn clear(&self) {
        lock(&self.answers).clear();
    }
}
