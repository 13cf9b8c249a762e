//! Channel messages to the window without a new script each.
//!
//! Tauri sends a small `Channel` message (a model's delta, a line of a
//! command's output) by evaluating a script that holds it, a new script
//! every time. WebKit keeps about 1.6 KB for every distinct script it has
//! evaluated and does not give it back: 100,000 of them took a blank
//! web view's process from 54 to 214 MiB, where the same script 40,000
//! times left it where it started. A long session streams hundreds of
//! messages a reply, so the window grew with every message of work.
//!
//! So the app takes Tauri's channel hook ([`intercept`]): each message is
//! queued here in an [`Outbox`], per webview, and the window is told to
//! come for them with one script that never changes ([`DRAIN`]), at most
//! once until it came. The window's drain (`ui/src/lib/channels.ts`)
//! fetches the queue with [`drain_channels`], a command like any other
//! (its answer comes back over the IPC protocol, not as a script), and
//! hands each message to its channel as Tauri would have. Channels order
//! their messages by index, so two drains whose answers cross lose
//! nothing and reorder nothing.

use serde_json::value::RawValue;
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use tauri::ipc::{CallbackFn, InvokeResponseBody};
use tauri::{Manager, Runtime, State, Webview};

/// The one script the window is sent to come for its messages.
pub const DRAIN: &str = "window.__corralDrain?.()";

/// A message for a channel of the window: the channel's callback, the
/// message's index on it, the message as JSON.
pub type Queued = (u32, usize, Box<RawValue>);

/// The messages each webview has not come for yet, by its label.
#[derive(Default)]
pub struct Outbox {
    queues: Mutex<HashMap<String, Queue>>,
}

#[derive(Default)]
struct Queue {
    messages: Vec<Queued>,
    /// The window was told to come, and has not yet.
    told: bool,
}

impl Outbox {
    /// Queues `message` for the webview `label`; `true` when the window
    /// must be told to come for it (it was not since it last came).
    pub fn push(&self, label: &str, message: Queued) -> bool {
        let mut queues = self.queues.lock().unwrap_or_else(PoisonError::into_inner);
        let queue = queues.entry(label.to_string()).or_default();
        queue.messages.push(message);
        !std::mem::replace(&mut queue.told, true)
    }

    /// Everything queued for the webview `label`, in the order sent; the
    /// next message tells the window again.
    pub fn take(&self, label: &str) -> Vec<Queued> {
        let mut queues = self.queues.lock().unwrap_or_else(PoisonError::into_inner);
        queues.remove(label).map(|q| q.messages).unwrap_or_default()
    }
}

/// Tauri's channel hook: a JSON message is queued and the window told
/// with [`DRAIN`]; a binary one, or one whose window cannot be told, goes
/// Tauri's own way (`false`).
pub fn intercept<R: Runtime>(
    webview: &Webview<R>,
    channel: CallbackFn,
    index: usize,
    body: &InvokeResponseBody,
) -> bool {
    let InvokeResponseBody::Json(json) = body else {
        return false;
    };
    let (Some(outbox), Ok(message)) = (
        webview.try_state::<Outbox>(),
        RawValue::from_string(json.clone()),
    ) else {
        return false;
    };
    if outbox.push(webview.label(), (channel.0, index, message)) && webview.eval(DRAIN).is_err() {
        // The webview is gone: nothing will come for its messages.
        drop(outbox.take(webview.label()));
    }
    true
}

/// The window's channel messages queued since it last came, in order.
#[tauri::command(rename_all = "snake_case")]
pub fn drain_channels<R: Runtime>(webview: Webview<R>, outbox: State<'_, Outbox>) -> Vec<Queued> {
    outbox.take(webview.label())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn message(id: u32, index: usize) -> Queued {
        let json = format!("{{\"n\":{index}}}");
        (id, index, RawValue::from_string(json).unwrap())
    }

    #[test]
    fn the_window_is_told_once_until_it_comes_and_gets_all_in_order() {
        let outbox = Outbox::default();
        assert!(outbox.push("main", message(7, 0)));
        assert!(!outbox.push("main", message(7, 1)));
        assert!(!outbox.push("main", message(9, 0)));
        // Another webview's are its own.
        assert!(outbox.push("other", message(3, 0)));
        let came: Vec<(u32, usize, String)> = outbox
            .take("main")
            .into_iter()
            .map(|(id, index, m)| (id, index, m.get().to_string()))
            .collect();
        assert_eq!(
            came,
            [
                (7, 0, "{\"n\":0}".to_string()),
                (7, 1, "{\"n\":1}".to_string()),
                (9, 0, "{\"n\":0}".to_string())
            ]
        );
        assert!(outbox.take("main").is_empty());
        // After it came, the next message tells it again.
        assert!(outbox.push("main", message(7, 2)));
        assert_eq!(outbox.take("other").len(), 1);
    }

    #[test]
    fn a_drain_answers_as_tauri_s_channels_read_it() {
        let answer = serde_json::to_string(&vec![message(7, 3)]).unwrap();
        assert_eq!(answer, "[[7,3,{\"n\":3}]]");
    }
}
