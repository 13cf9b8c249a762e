//! A remote background command's ports, reached from here. serve lists
//! each port a background command listens on with `reach_at`, where the
//! remote machine reaches it on its 127.0.0.1. This side forwards that
//! port over the SAME multiplexed ssh connection (`ssh -O forward -L
//! 127.0.0.1:LOCAL:127.0.0.1:REMOTE`) and rewrites the answer so
//! `reach_at` is LOCAL: the window and exec see an address of this
//! machine, as for a local project. A forward is cancelled (`-O cancel`)
//! when the command no longer lists the port, when it stops, and when the
//! session ends or its connection drops (its commands end with it).

use crate::Remote;
use serde_json::Value;
use std::collections::HashMap;
use std::net::TcpListener;
use std::process::Stdio;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// The answers that carry background commands' ports.
const CARRY_PORTS: [&str; 5] = [
    "list_processes",
    "process_output",
    "stop_process",
    "call_tool",
    "run_call",
];

/// The forwards made, by command and remote port: the local port.
#[derive(Default)]
pub(crate) struct Forwards {
    made: Mutex<HashMap<(String, u16), u16>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Forwards {
    /// Rewrites the background commands in `answer` (of `command`) so
    /// their ports are reached here, forwarding the new ones and
    /// cancelling those no longer listed.
    pub fn rewrite(&self, remote: &Remote, command: &str, answer: &mut Value) {
        if !CARRY_PORTS.contains(&command) {
            return;
        }
        let listed = match answer {
            Value::Array(items) => items.iter_mut().collect(),
            one => vec![one],
        };
        let mut seen = Vec::new();
        for item in listed {
            if let Some(run_id) = self.rewrite_one(remote, item) {
                seen.push(run_id);
            }
        }
        // The whole list: a command missing from it is gone.
        if command == "list_processes" {
            let gone: Vec<(String, u16)> = lock(&self.made)
                .keys()
                .filter(|(run_id, _)| !seen.contains(run_id))
                .cloned()
                .collect();
            self.cancel(remote, gone);
        }
    }

    /// One command's look (`CommandOutput`): its run id when it is one.
    fn rewrite_one(&self, remote: &Remote, item: &mut Value) -> Option<String> {
        let object = item.as_object_mut()?;
        let run_id = object.get("run_id")?.as_str()?.to_string();
        let running = object.get("running")?.as_bool()?;
        let ports = object.get_mut("ports")?.as_array_mut()?;
        let mut kept = Vec::new();
        for port in ports.iter_mut() {
            let Some(there) = port
                .get("reach_at")
                .and_then(Value::as_u64)
                .and_then(|p| u16::try_from(p).ok())
            else {
                continue;
            };
            let key = (run_id.clone(), there);
            let here = match running {
                true => self.forward(remote, key.clone()),
                false => None,
            };
            match (here, port.as_object_mut()) {
                (Some(here), Some(port)) => {
                    port.insert("reach_at".into(), here.into());
                    kept.push(key);
                }
                // Not reachable from here: listed without an address.
                (None, Some(port)) => {
                    port.remove("reach_at");
                }
                _ => {}
            }
        }
        let dropped: Vec<(String, u16)> = lock(&self.made)
            .keys()
            .filter(|key| key.0 == run_id && !kept.contains(key))
            .cloned()
            .collect();
        self.cancel(remote, dropped);
        Some(run_id)
    }

    /// The local port of `key`'s forward, made now when there is none.
    fn forward(&self, remote: &Remote, key: (String, u16)) -> Option<u16> {
        if let Some(here) = lock(&self.made).get(&key) {
            return Some(*here);
        }
        let there = key.1;
        // The same port when it is free here, as a local project's are.
        for wanted in [there, 0] {
            let Some(here) = free_port(wanted) else {
                continue;
            };
            if control(remote, "forward", here, there) {
                lock(&self.made).insert(key, here);
                return Some(here);
            }
        }
        None
    }

    /// Cancels every forward: the session ended, or its connection did.
    pub fn cancel_all(&self, remote: &Remote) {
        let all: Vec<(String, u16)> = lock(&self.made).keys().cloned().collect();
        self.cancel(remote, all);
    }

    fn cancel(&self, remote: &Remote, keys: Vec<(String, u16)>) {
        for key in keys {
            let Some(here) = lock(&self.made).remove(&key) else {
                continue;
            };
            // When the connection is gone its forwards went with it.
            control(remote, "cancel", here, key.1);
        }
    }

    /// The local port forwarded to `there` for `run_id`, if any.
    #[cfg(test)]
    fn local(&self, run_id: &str, there: u16) -> Option<u16> {
        lock(&self.made).get(&(run_id.to_string(), there)).copied()
    }
}

/// A port of 127.0.0.1 free now: `wanted`, or any when 0.
fn free_port(wanted: u16) -> Option<u16> {
    let listener = TcpListener::bind(("127.0.0.1", wanted)).ok()?;
    listener.local_addr().ok().map(|a| a.port())
}

/// Asks the multiplexed connection's master to `op` (`forward` or
/// `cancel`) 127.0.0.1:HERE to the remote's 127.0.0.1:THERE.
fn control(remote: &Remote, op: &str, here: u16, there: u16) -> bool {
    let spec = format!("127.0.0.1:{here}:127.0.0.1:{there}");
    remote
        .ssh()
        .args(["-O", op, "-L", &spec, "--", &remote.destination])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn nowhere() -> Remote {
        // A host ssh cannot reach: every forward fails.
        Remote {
            destination: "corral-nowhere.invalid".into(),
            port: None,
            path: "/p".into(),
            config: Some("/dev/null".into()),
            connect_timeout: crate::CONNECT_TIMEOUT,
        }
    }

    #[test]
    fn a_port_that_cannot_be_forwarded_is_listed_without_an_address() {
        let forwards = Forwards::default();
        let mut answer = json!([{"run_id": "bg-1", "running": true,
            "ports": [{"port": 8000, "reach_at": 8000}, {"port": 22}]}]);
        forwards.rewrite(&nowhere(), "list_processes", &mut answer);
        assert_eq!(
            answer,
            json!([{"run_id": "bg-1", "running": true, "ports": [{"port": 8000}, {"port": 22}]}])
        );
        assert_eq!(forwards.local("bg-1", 8000), None);
    }

    #[test]
    fn answers_of_other_commands_are_left_as_they_are() {
        let forwards = Forwards::default();
        let mut answer = json!({"run_id": "bg-1", "running": true,
            "ports": [{"port": 8000, "reach_at": 8000}]});
        let before = answer.clone();
        forwards.rewrite(&nowhere(), "mcp_status", &mut answer);
        assert_eq!(answer, before);
    }
}
