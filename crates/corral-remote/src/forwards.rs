//! A remote background command's ports, reached from here. serve lists
//! each port a background command listens on with `reach_at`, where the
//! remote machine reaches it on its 127.0.0.1. This side forwards that
//! port over the SAME multiplexed ssh connection (`ssh -O forward -L
//! 127.0.0.1:LOCAL:127.0.0.1:REMOTE`) and rewrites the answer so
//! `reach_at` is LOCAL: the window and exec see an address of this
//! machine, as for a local project. A forward is cancelled (`-O cancel`)
//! when the command no longer lists the port, when it stops, and when the
//! session ends or its connection drops (its commands end with it).
//!
//! The remote is not trusted to say what this machine listens on. A
//! forward is made only for a background command this side started (it
//! sent `exec_shell` with `background: true`, by `call_tool` or by a
//! ticket of its `check_call`, and got the run id back from that serve),
//! and only for the ports that command's run reports in the answers to
//! this side's looks at that run id: `list_processes`'s entry of that run,
//! `process_output` and `stop_process` of it, and the tools'
//! `command_output` and `stop_command` of it. Every other `reach_at` of
//! an answer (another run's, an unknown id's, one in the answer to an
//! unrelated command) is dropped, and said on stderr; a `reach_at` left
//! in an answer is always the one set here.

use crate::Remote;
use serde_json::Value;
use std::collections::{HashMap, HashSet, VecDeque};
use std::net::TcpListener;
use std::process::Stdio;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// The checked calls kept by ticket, as serve keeps its tickets: the
/// newest 256.
const TICKETS_KEPT: usize = 256;

/// The ignored ports said on stderr already, before they are said again.
const SAID_KEPT: usize = 256;

/// How much of a remote's run id a line on stderr shows.
const SHOWN: usize = 80;

/// What a request of this side's makes of its answer's ports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Sent {
    /// Not a look at a background command: no port of its answer is
    /// forwarded.
    Other,
    /// `list_processes`: each entry of a command this side started.
    List,
    /// A call run at once (`call_tool`), or a look by the Processes panel.
    Call(Call),
    /// `check_call` of a call that matters here: its ticket runs it.
    Check(Call),
    /// `run_call`: the call its ticket was checked for.
    Run(String),
}

/// A call of this side's that starts or looks at a background command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Call {
    /// `exec_shell` with `background: true`: its answer's run id is a
    /// command this side started.
    Start,
    /// A look at (or a stop of) the run of this id.
    Look(String),
}

impl Sent {
    /// What `command` with `args` is, as far as ports go.
    pub fn of(command: &str, args: &Value) -> Sent {
        let call = |tool: &Value, input: &Value| match tool.as_str()? {
            "exec_shell" => {
                (input.get("background") == Some(&Value::Bool(true))).then_some(Call::Start)
            }
            "command_output" | "stop_command" => run_id(input).map(Call::Look),
            _ => None,
        };
        let sent = match command {
            "list_processes" => Some(Sent::List),
            "process_output" | "stop_process" => run_id(args).map(|id| Sent::Call(Call::Look(id))),
            "call_tool" => call(&args["name"], &args["input"]).map(Sent::Call),
            "check_call" => call(&args["tool"], &args["input"]).map(Sent::Check),
            "run_call" => args["ticket"].as_str().map(|t| Sent::Run(t.to_string())),
            _ => None,
        };
        sent.unwrap_or(Sent::Other)
    }
}

fn run_id(value: &Value) -> Option<String> {
    value.get("run_id")?.as_str().map(str::to_string)
}

/// Forwards a port of 127.0.0.1 here to one of the remote's (`forward`),
/// or stops (`cancel`): `(remote, op, here, there)`; true when done.
type Control = Box<dyn Fn(&Remote, &str, u16, u16) -> bool + Send + Sync>;

/// The forwards made, by command and remote port: the local port.
pub(crate) struct Forwards {
    made: Mutex<HashMap<(String, u16), u16>>,
    calls: Mutex<Calls>,
    control: Control,
}

/// What this side asked of the serve connected now.
#[derive(Default)]
struct Calls {
    /// The run ids of the background commands it started.
    started: HashSet<String>,
    /// The calls checked that start or look at one, by ticket.
    tickets: VecDeque<(String, Call)>,
    /// The ignored ports said already.
    said: HashSet<String>,
    /// Every line said, for the tests.
    #[cfg(test)]
    lines: Vec<String>,
}

impl Default for Forwards {
    fn default() -> Forwards {
        Forwards::with_control(Box::new(control))
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Forwards {
    fn with_control(control: Control) -> Forwards {
        Forwards {
            made: Mutex::default(),
            calls: Mutex::default(),
            control,
        }
    }

    /// Rewrites `answer` (of `command`, which was `sent`) so the ports of
    /// this side's background commands are reached here, forwarding the
    /// new ones and cancelling those no longer listed; every other
    /// `reach_at` is dropped.
    pub fn rewrite(&self, remote: &Remote, command: &str, sent: Sent, answer: &mut Value) {
        let call = match sent {
            Sent::Other => None,
            Sent::List => return self.rewrite_list(remote, command, answer),
            Sent::Call(call) => Some(call),
            Sent::Check(call) => {
                if let Some(ticket) = answer.get("ticket").and_then(Value::as_str) {
                    let mut calls = lock(&self.calls);
                    calls.tickets.push_back((ticket.to_string(), call));
                    if calls.tickets.len() > TICKETS_KEPT {
                        calls.tickets.pop_front();
                    }
                }
                None
            }
            // A ticket runs once: it is spent.
            Sent::Run(ticket) => {
                let mut calls = lock(&self.calls);
                let at = calls.tickets.iter().position(|(t, _)| *t == ticket);
                at.and_then(|at| calls.tickets.remove(at))
                    .map(|(_, call)| call)
            }
        };
        match call {
            Some(Call::Start) => {
                if let Some(id) = answer.get("run_id").and_then(Value::as_str) {
                    lock(&self.calls).started.insert(id.to_string());
                }
                // Its ports, if any, are for a look at it to report.
                self.ignore(remote, command, answer);
            }
            Some(Call::Look(asked)) => {
                let about = answer.get("run_id").and_then(Value::as_str);
                if about == Some(asked.as_str()) && self.started(&asked) {
                    self.rewrite_one(remote, &asked, answer);
                } else {
                    self.ignore(remote, command, answer);
                }
            }
            None => self.ignore(remote, command, answer),
        }
    }

    /// `list_processes`: every command there. Each of those this side
    /// started reaches its ports here; a command missing from the list is
    /// gone.
    fn rewrite_list(&self, remote: &Remote, command: &str, answer: &mut Value) {
        let Value::Array(items) = answer else {
            return self.ignore(remote, command, answer);
        };
        let mut seen = Vec::new();
        for item in items {
            match run_id(item).filter(|id| self.started(id)) {
                Some(id) => {
                    self.rewrite_one(remote, &id, item);
                    seen.push(id);
                }
                None => self.ignore_one(remote, command, item),
            }
        }
        let gone: Vec<(String, u16)> = lock(&self.made)
            .keys()
            .filter(|(run_id, _)| !seen.contains(run_id))
            .cloned()
            .collect();
        self.cancel(remote, gone);
    }

    fn started(&self, run_id: &str) -> bool {
        lock(&self.calls).started.contains(run_id)
    }

    /// One look (`CommandOutput`) at `run_id`, a command this side started.
    fn rewrite_one(&self, remote: &Remote, run_id: &str, item: &mut Value) {
        let running = item.get("running").and_then(Value::as_bool) == Some(true);
        let mut kept = Vec::new();
        let ports = item.get_mut("ports").and_then(Value::as_array_mut);
        for port in ports.into_iter().flatten().filter_map(Value::as_object_mut) {
            // The remote's address is where the forward goes there, never
            // the answer's: the answer gets the one made here, or none.
            let there = port
                .remove("reach_at")
                .as_ref()
                .and_then(Value::as_u64)
                .and_then(|p| u16::try_from(p).ok())
                .filter(|p| *p != 0);
            let Some(there) = there.filter(|_| running) else {
                continue;
            };
            let key = (run_id.to_string(), there);
            if let Some(here) = self.forward(remote, key.clone()) {
                port.insert("reach_at".into(), here.into());
                kept.push(key);
            }
        }
        let dropped: Vec<(String, u16)> = lock(&self.made)
            .keys()
            .filter(|key| key.0 == run_id && !kept.contains(key))
            .cloned()
            .collect();
        self.cancel(remote, dropped);
    }

    /// Drops every `reach_at` of `answer` (one look, or a list of them):
    /// nothing of it is forwarded.
    fn ignore(&self, remote: &Remote, command: &str, answer: &mut Value) {
        match answer {
            Value::Array(items) => {
                for item in items {
                    self.ignore_one(remote, command, item);
                }
            }
            one => self.ignore_one(remote, command, one),
        }
    }

    fn ignore_one(&self, remote: &Remote, command: &str, item: &mut Value) {
        let Some(ports) = item.get_mut("ports").and_then(Value::as_array_mut) else {
            return;
        };
        let dropped: Vec<String> = ports
            .iter_mut()
            .filter_map(Value::as_object_mut)
            .filter_map(|port| port.remove("reach_at"))
            .map(|reach_at| shown(&reach_at))
            .collect();
        if dropped.is_empty() {
            return;
        }
        let run = item.get("run_id").map_or_else(|| "none".into(), shown);
        let line = format!(
            "corral: {}: not forwarding the port(s) {} listed for the run {run} in the answer to `{command}`: only a background command started from here, asked about by its run id, has its ports forwarded",
            remote.destination,
            dropped.join(", "),
        );
        let mut calls = lock(&self.calls);
        if calls.said.len() >= SAID_KEPT {
            calls.said.clear();
        }
        if calls.said.insert(line.clone()) {
            eprintln!("{line}");
        }
        #[cfg(test)]
        calls.lines.push(line);
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
            if (self.control)(remote, "forward", here, there) {
                lock(&self.made).insert(key, here);
                return Some(here);
            }
        }
        None
    }

    /// Cancels every forward and forgets what was started: the session
    /// ended, or its connection did (and that serve's commands with it).
    pub fn cancel_all(&self, remote: &Remote) {
        let all: Vec<(String, u16)> = lock(&self.made).keys().cloned().collect();
        self.cancel(remote, all);
        let mut calls = lock(&self.calls);
        calls.started.clear();
        calls.tickets.clear();
    }

    fn cancel(&self, remote: &Remote, keys: Vec<(String, u16)>) {
        for key in keys {
            let Some(here) = lock(&self.made).remove(&key) else {
                continue;
            };
            // When the connection is gone its forwards went with it.
            (self.control)(remote, "cancel", here, key.1);
        }
    }

    /// The local port forwarded to `there` for `run_id`, if any.
    #[cfg(test)]
    fn local(&self, run_id: &str, there: u16) -> Option<u16> {
        lock(&self.made).get(&(run_id.to_string(), there)).copied()
    }
}

/// A value of the remote's, for a line on stderr: as JSON (a control
/// character escaped), at most [`SHOWN`] characters.
fn shown(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(SHOWN) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
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
    use std::sync::Arc;

    fn nowhere() -> Remote {
        // A host ssh cannot reach: every forward fails.
        Remote {
            destination: "corral-nowhere.invalid".into(),
            port: None,
            path: "/p".into(),
            config: Some("/dev/null".into()),
            connect_timeout: crate::CONNECT_TIMEOUT,
            container: None,
            pod: None,
        }
    }

    /// What the fake master was asked: `(op, here, there)`.
    type Asked = Arc<Mutex<Vec<(String, u16, u16)>>>;

    /// Forwards whose master does what it is asked, and says what that was.
    fn forwards() -> (Forwards, Asked) {
        let asked = Asked::default();
        let kept = asked.clone();
        let control: Control = Box::new(move |_: &Remote, op: &str, here, there| {
            lock(&kept).push((op.to_string(), here, there));
            true
        });
        (Forwards::with_control(control), asked)
    }

    /// `command` with `args` sent, and `answer` rewritten as it came back.
    fn answered(forwards: &Forwards, command: &str, args: Value, mut answer: Value) -> Value {
        forwards.rewrite(&nowhere(), command, Sent::of(command, &args), &mut answer);
        answer
    }

    fn forwarded(asked: &Asked) -> Vec<u16> {
        lock(asked)
            .iter()
            .filter(|(op, ..)| op == "forward")
            .map(|(_, _, there)| *there)
            .collect()
    }

    fn said(forwards: &Forwards) -> Vec<String> {
        lock(&forwards.calls).lines.clone()
    }

    /// A look at `run_id`, running, listing `ports` with the remote's
    /// `reach_at`.
    fn look(run_id: &str, ports: &[u16]) -> Value {
        let ports: Vec<Value> = ports
            .iter()
            .map(|p| json!({"port": p, "reach_at": p}))
            .collect();
        json!({"run_id": run_id, "command": "x", "args": [], "running": true, "ports": ports})
    }

    fn no_reach_at(answer: &Value) -> bool {
        !answer.to_string().contains("reach_at")
    }

    /// This side starts `bg-1` in the background, by `call_tool`.
    fn start(forwards: &Forwards, run_id: &str) {
        let args = json!({"name": "exec_shell",
            "input": {"command": "python3", "args": ["-m", "http.server"], "background": true}});
        let answer = json!({"run_id": run_id, "command": "python3", "args": ["-m", "http.server"]});
        answered(forwards, "call_tool", args, answer);
    }

    #[test]
    fn a_hostile_answer_for_a_run_this_side_never_started_forwards_nothing() {
        let (forwards, asked) = forwards();
        let evil = look("bg-evil", &[5432, 11434, 9222]);
        let list = answered(
            &forwards,
            "list_processes",
            json!({}),
            json!([evil.clone()]),
        );
        let one = answered(
            &forwards,
            "process_output",
            json!({"run_id": "bg-evil"}),
            evil.clone(),
        );
        let stopped = answered(
            &forwards,
            "stop_process",
            json!({"run_id": "bg-evil"}),
            evil.clone(),
        );
        let tool = answered(
            &forwards,
            "call_tool",
            json!({"name": "command_output", "input": {"run_id": "bg-evil"}}),
            evil.clone(),
        );
        for answer in [&list, &one, &stopped, &tool] {
            assert!(no_reach_at(answer), "{answer}");
            assert_eq!(
                answer.to_string().matches("\"port\"").count(),
                3,
                "{answer}"
            );
        }
        assert_eq!(forwarded(&asked), Vec::<u16>::new());
        assert_eq!(forwards.local("bg-evil", 5432), None);
        let said = said(&forwards);
        assert!(
            said.iter().any(|l| l.contains("5432")
                && l.contains("\"bg-evil\"")
                && l.contains("`list_processes`")),
            "{said:?}"
        );
    }

    #[test]
    fn a_background_command_this_side_started_gets_its_forward_and_no_other() {
        let (forwards, asked) = forwards();
        start(&forwards, "bg-1");
        let list = answered(
            &forwards,
            "list_processes",
            json!({}),
            json!([look("bg-evil", &[9222]), look("bg-1", &[8000])]),
        );
        let here = forwards.local("bg-1", 8000).expect("forwarded");
        assert_eq!(list[1]["ports"][0]["reach_at"], here, "{list}");
        assert!(no_reach_at(&list[0]), "{list}");
        assert_eq!(forwarded(&asked), [8000]);
        // Asked again by its id, the same forward.
        let one = answered(
            &forwards,
            "process_output",
            json!({"run_id": "bg-1"}),
            look("bg-1", &[8000]),
        );
        assert_eq!(one["ports"][0]["reach_at"], here, "{one}");
        assert_eq!(forwarded(&asked), [8000]);
        assert_eq!(forwards.local("bg-evil", 9222), None);
    }

    #[test]
    fn ports_of_a_started_command_count_only_in_a_look_at_it() {
        let (forwards, asked) = forwards();
        start(&forwards, "bg-1");
        start(&forwards, "bg-2");
        // The answer about bg-2 speaking for bg-1; bg-1's ports in the
        // answer that started it, or to an unrelated command.
        let other = answered(
            &forwards,
            "process_output",
            json!({"run_id": "bg-2"}),
            look("bg-1", &[5432]),
        );
        let tool = answered(
            &forwards,
            "call_tool",
            json!({"name": "stop_command", "input": {"run_id": "bg-2"}}),
            look("bg-1", &[5432]),
        );
        let status = answered(
            &forwards,
            "mcp_status",
            json!({}),
            json!([look("bg-1", &[5432])]),
        );
        let read = answered(
            &forwards,
            "call_tool",
            json!({"name": "read_file", "input": {"path": "a"}}),
            look("bg-1", &[5432]),
        );
        for answer in [&other, &tool, &status, &read] {
            assert!(no_reach_at(answer), "{answer}");
        }
        let args = json!({"name": "exec_shell", "input": {"command": "x", "args": [], "background": true}});
        let started = answered(&forwards, "call_tool", args, look("bg-3", &[5432]));
        assert!(no_reach_at(&started), "{started}");
        // A command run in the foreground has no run of its own to report.
        let args = json!({"name": "exec_shell", "input": {"command": "x", "args": []}});
        answered(&forwards, "call_tool", args, json!({"run_id": "bg-4"}));
        let list = answered(
            &forwards,
            "list_processes",
            json!({}),
            json!([look("bg-4", &[5432])]),
        );
        assert!(no_reach_at(&list), "{list}");
        assert_eq!(forwarded(&asked), Vec::<u16>::new());
    }

    #[test]
    fn a_call_checked_then_run_by_its_ticket_counts_as_this_sides() {
        let (forwards, asked) = forwards();
        let check = json!({"tool": "exec_shell", "input": {"command": "x", "args": [], "background": true}});
        answered(
            &forwards,
            "check_call",
            check,
            json!({"ticket": "t1", "decision": "allow"}),
        );
        answered(
            &forwards,
            "run_call",
            json!({"ticket": "t1"}),
            json!({"run_id": "bg-1", "command": "x", "args": []}),
        );
        let check = json!({"tool": "command_output", "input": {"run_id": "bg-1"}});
        answered(
            &forwards,
            "check_call",
            check,
            json!({"ticket": "t2", "decision": "allow"}),
        );
        let one = answered(
            &forwards,
            "run_call",
            json!({"ticket": "t2"}),
            look("bg-1", &[8000]),
        );
        assert!(one["ports"][0]["reach_at"].is_u64(), "{one}");
        // A ticket is spent once run; one never checked here counts for nothing.
        let again = answered(
            &forwards,
            "run_call",
            json!({"ticket": "t2"}),
            look("bg-1", &[8001]),
        );
        let unknown = answered(
            &forwards,
            "run_call",
            json!({"ticket": "t9"}),
            look("bg-1", &[8002]),
        );
        assert!(
            no_reach_at(&again) && no_reach_at(&unknown),
            "{again} {unknown}"
        );
        assert_eq!(forwarded(&asked), [8000]);
    }

    #[test]
    fn a_reach_at_that_is_not_a_port_is_dropped() {
        let (forwards, asked) = forwards();
        start(&forwards, "bg-1");
        let answer = json!({"run_id": "bg-1", "running": true, "ports": [
            {"port": 1, "reach_at": "5432"}, {"port": 2, "reach_at": 70000},
            {"port": 3, "reach_at": 0}, {"port": 4, "reach_at": -1}]});
        let one = answered(
            &forwards,
            "process_output",
            json!({"run_id": "bg-1"}),
            answer,
        );
        assert!(no_reach_at(&one), "{one}");
        assert_eq!(forwarded(&asked), Vec::<u16>::new());
    }

    #[test]
    fn a_stopped_command_or_a_port_no_longer_listed_has_its_forward_cancelled() {
        let (forwards, asked) = forwards();
        start(&forwards, "bg-1");
        answered(
            &forwards,
            "list_processes",
            json!({}),
            json!([look("bg-1", &[8000, 8001])]),
        );
        let here = forwards.local("bg-1", 8000).unwrap();
        answered(
            &forwards,
            "process_output",
            json!({"run_id": "bg-1"}),
            look("bg-1", &[8001]),
        );
        assert_eq!(forwards.local("bg-1", 8000), None);
        assert!(lock(&asked).contains(&("cancel".into(), here, 8000)));
        let mut stopped = look("bg-1", &[8001]);
        stopped["running"] = json!(false);
        let stopped = answered(
            &forwards,
            "stop_process",
            json!({"run_id": "bg-1"}),
            stopped,
        );
        assert!(no_reach_at(&stopped), "{stopped}");
        assert_eq!(forwards.local("bg-1", 8001), None);
    }

    #[test]
    fn a_new_serve_knows_none_of_the_runs_of_the_last() {
        let (forwards, asked) = forwards();
        start(&forwards, "bg-1");
        let check = json!({"tool": "exec_shell", "input": {"command": "x", "args": [], "background": true}});
        answered(&forwards, "check_call", check, json!({"ticket": "t1"}));
        forwards.cancel_all(&nowhere());
        answered(
            &forwards,
            "run_call",
            json!({"ticket": "t1"}),
            json!({"run_id": "bg-2"}),
        );
        let list = answered(
            &forwards,
            "list_processes",
            json!({}),
            json!([look("bg-1", &[8000]), look("bg-2", &[8001])]),
        );
        assert!(no_reach_at(&list), "{list}");
        assert_eq!(forwarded(&asked), Vec::<u16>::new());
    }

    #[test]
    fn a_port_that_cannot_be_forwarded_is_listed_without_an_address() {
        let forwards = Forwards::default();
        start(&forwards, "bg-1");
        let mut answer = json!([{"run_id": "bg-1", "running": true,
            "ports": [{"port": 8000, "reach_at": 8000}, {"port": 22}]}]);
        forwards.rewrite(&nowhere(), "list_processes", Sent::List, &mut answer);
        assert_eq!(
            answer,
            json!([{"run_id": "bg-1", "running": true, "ports": [{"port": 8000}, {"port": 22}]}])
        );
        assert_eq!(forwards.local("bg-1", 8000), None);
    }

    #[test]
    fn a_long_or_strange_run_id_is_said_escaped_and_cut() {
        let (forwards, _) = forwards();
        let id = format!("\u{1b}[2J{}", "x".repeat(500));
        answered(
            &forwards,
            "list_processes",
            json!({}),
            json!([look(&id, &[5432])]),
        );
        let said = said(&forwards);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            !said[0].contains('\u{1b}') && said[0].contains("\\u001b"),
            "{said:?}"
        );
        assert!(said[0].len() < 400, "{said:?}");
    }
}
