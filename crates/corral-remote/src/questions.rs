//! The questions serve asks of its own accord, between its answers: a
//! command of a conversation met a domain off the egress allowlist
//! (docs/remote.md, `domain_questions`). Each is handed to the listener
//! the caller set; one still open when its connection ends is closed
//! here, as serve refused it when it stopped its command.

use serde_json::{json, Value};
use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// Where the questions serve asks are heard (`{"kind": "asked", "id",
/// "conversation", "domain"}`, then `{"kind": "closed", "id"}`).
pub type OnQuestion = Arc<dyn Fn(Value) + Send + Sync>;

/// A session's listener, once set, shared with every connection's reader.
pub(crate) type Listener = Arc<Mutex<Option<OnQuestion>>>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The questions of one connection.
pub(crate) struct Questions {
    listener: Listener,
    /// Asked, and not closed yet.
    open: Mutex<HashSet<String>>,
}

impl Questions {
    pub(crate) fn new(listener: &Listener) -> Questions {
        Questions {
            listener: listener.clone(),
            open: Mutex::default(),
        }
    }

    /// Hands a question of serve's to the listener, keeping which are open.
    pub(crate) fn hear(&self, question: Value) {
        if let Some(id) = question["id"].as_str() {
            let mut open = lock(&self.open);
            match question["kind"].as_str() {
                Some("asked") => open.insert(id.to_string()),
                _ => open.remove(id),
            };
        }
        let listener = lock(&self.listener).clone();
        if let Some(listener) = listener {
            listener(question);
        }
    }

    /// The connection ended: every question still open is closed.
    pub(crate) fn close_all(&self) {
        let open: Vec<String> = lock(&self.open).drain().collect();
        for id in open {
            self.hear(json!({"kind": "closed", "id": id}));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_questions_open_when_the_connection_ends_are_closed() {
        let listener = Listener::default();
        let heard: Arc<Mutex<Vec<Value>>> = Arc::default();
        let into = heard.clone();
        *lock(&listener) = Some(Arc::new(move |q| lock(&into).push(q)));
        let questions = Questions::new(&listener);
        let asked =
            |id: &str| json!({"kind": "asked", "id": id, "conversation": "c", "domain": "d"});
        questions.hear(asked("q1"));
        questions.hear(asked("q2"));
        questions.hear(json!({"kind": "closed", "id": "q1"}));
        questions.close_all();
        questions.close_all();
        let heard = lock(&heard).clone();
        assert_eq!(
            heard,
            [
                asked("q1"),
                asked("q2"),
                json!({"kind": "closed", "id": "q1"}),
                json!({"kind": "closed", "id": "q2"}),
            ]
        );
    }
}
