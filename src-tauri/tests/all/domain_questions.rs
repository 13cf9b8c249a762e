//! A command the user let use the network asks, through the app state's
//! hook, about a domain off the egress allowlist: the answer holds for
//! its conversation and no other, ends with it, and no answer within the
//! wait refuses. A background command asks after its call returned, and
//! stopping it drops its question; commands meeting the same domain at
//! once get one question. Real commands in the real sandbox, through the
//! real proxy.

use corral_app::remote::Routes;
use corral_app::state::AppState;
use corral_app::store::Store;
use corral_session::approvals::Answer;
use corral_session::domains::{Asking, DomainQuestion};
use corral_session::{Call, Consent, RunContext};
use corral_testkit::{wait_until, Project};
use corral_tools::shell::{CancelToken, ShellRun};
use serde_json::{json, Value};

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A name that resolves nowhere: only the proxy's judgement of it counts.
const DOMAIN: &str = "elsewhere.invalid";

fn fenced() -> bool {
    corral_testkit::fenced(&["/usr/bin/python3"])
}

/// A fetch of the domain through the proxy (python reads `http_proxy`).
fn fetch() -> Value {
    let code = format!(
        "import urllib.request\ntry:\n    urllib.request.urlopen('http://{DOMAIN}/', timeout=30)\nexcept Exception as e:\n    print('failed', e)"
    );
    json!({"command": "python3", "args": ["-c", code]})
}

/// How the window answers in a test: allow, refuse, or say nothing.
#[derive(Clone, Copy)]
enum Window {
    Allows,
    Refuses,
    Silent,
}

/// Runs the fetch, granted the network, in `conversation`; returns its
/// output and the domains the window was asked about.
fn run(
    state: &AppState,
    conversation: &str,
    window: Window,
    wait: Duration,
) -> (Value, Vec<String>) {
    let input = fetch();
    let ticket = state
        .session()
        .unwrap()
        .check(Call::new("exec_shell", input).in_conversation(conversation))
        .unwrap();
    let asked: Arc<Mutex<Vec<String>>> = Arc::default();
    let (seen, answers) = (asked.clone(), state.domains.clone());
    let notify = Arc::new(move |question: DomainQuestion| {
        if let DomainQuestion::Asked { id, domain, .. } = question {
            seen.lock().unwrap().push(domain);
            match window {
                Window::Allows => assert!(answers.respond(&id, true)),
                Window::Refuses => assert!(answers.respond(&id, false)),
                Window::Silent => {}
            }
        }
    });
    let mut shell = ShellRun::default();
    shell.egress.ask = Some(state.domains.hook(Asking {
        conversation: conversation.into(),
        notify,
        cancel: CancelToken::default(),
        on_output: None,
        wait,
    }));
    let run = RunContext {
        shell,
        ..RunContext::default()
    };
    let out = tauri::async_runtime::block_on(state.session().unwrap().run(
        &ticket.ticket,
        Consent::Answer(Answer::with_network()),
        run,
    ))
    .unwrap();
    assert_eq!(out["profile"], "network", "{out}");
    let asked = asked.lock().unwrap().clone();
    (out, asked)
}

fn refused_by_user(out: &Value) -> bool {
    let stderr = out["stderr"].as_str().unwrap_or_default();
    stderr.contains(&format!("corral proxy: refused GET http://{DOMAIN}"))
        && stderr.contains("the user did not allow it")
}

#[test]
fn a_domain_is_asked_about_once_per_conversation_and_no_answer_refuses() {
    if !fenced() {
        return;
    }
    let (_project, state) = open_app();
    let long = Duration::from_secs(60);

    // Refused when asked: the proxy logs it, the conversation remembers it.
    let (out, asked) = run(&state, "c1", Window::Refuses, long);
    assert_eq!(asked, [DOMAIN]);
    assert!(refused_by_user(&out), "{out}");
    assert_eq!(state.domains.answer("c1", DOMAIN), Some(false));

    // The same conversation is not asked again.
    let (out, asked) = run(&state, "c1", Window::Allows, long);
    assert!(asked.is_empty(), "asked again: {asked:?}");
    assert!(refused_by_user(&out), "{out}");

    // Another conversation is asked; allowed, the proxy goes on to
    // resolve the name (which resolves nowhere).
    let (out, asked) = run(&state, "c2", Window::Allows, long);
    assert_eq!(asked, [DOMAIN]);
    assert!(!refused_by_user(&out), "{out}");
    assert!(
        out["stderr"]
            .as_str()
            .unwrap()
            .contains("could not resolve"),
        "{out}"
    );
    assert_eq!(state.domains.answer("c2", DOMAIN), Some(true));

    // Ending a conversation (the window's command) ends its answers.
    let here = state.here(None).unwrap().unwrap();
    let ended = here.invoke("end_conversation", json!({"conversation": "c1"}), None);
    tauri::async_runtime::block_on(ended).unwrap();
    assert_eq!(state.domains.answer("c1", DOMAIN), None);
    assert_eq!(state.domains.answer("c2", DOMAIN), Some(true));

    // No answer within the wait refuses, and nothing is remembered.
    let (out, asked) = run(&state, "c3", Window::Silent, Duration::from_secs(1));
    assert_eq!(asked, [DOMAIN]);
    assert!(refused_by_user(&out), "{out}");
    assert_eq!(state.domains.answer("c3", DOMAIN), None);
}

#[test]
fn a_stopped_command_drops_its_question_and_a_silent_window_is_refused_in_its_panel() {
    let kit = Project::new();
    let state = AppState::new(Store::without_keychain(kit.config_dir(), kit.data_dir()));
    assert!(!state.domains.respond("no-such-question", true));
    let told: Arc<Mutex<Vec<DomainQuestion>>> = Arc::default();
    let heard = told.clone();
    let notify = Arc::new(move |question: DomainQuestion| heard.lock().unwrap().push(question));
    let panel: Arc<Mutex<String>> = Arc::default();
    let shown = panel.clone();
    let on_output: corral_tools::shell::OutputSink = Arc::new(move |_, bytes: &[u8]| {
        shown
            .lock()
            .unwrap()
            .push_str(&String::from_utf8_lossy(bytes));
    });

    // Stopped while it waits: refused at once, the window's question closed.
    let cancel = CancelToken::default();
    let ask = state.domains.hook(Asking {
        conversation: "c1".into(),
        notify: notify.clone(),
        cancel: cancel.clone(),
        on_output: Some(on_output.clone()),
        wait: Duration::from_secs(60),
    });
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        cancel.cancel();
    });
    let started = std::time::Instant::now();
    assert!(!ask(DOMAIN));
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    stopper.join().unwrap();
    let questions = told.lock().unwrap().clone();
    let [DomainQuestion::Asked { id, .. }, DomainQuestion::Closed { id: closed }] = &questions[..]
    else {
        panic!("{questions:?}");
    };
    assert_eq!(id, closed);
    assert!(!state.domains.respond(id, true), "the question still waits");
    assert_eq!(state.domains.answer("c1", DOMAIN), None);

    // No answer within the wait: refused, and the panel says why.
    let ask = state.domains.hook(Asking {
        conversation: "c1".into(),
        notify,
        cancel: CancelToken::default(),
        on_output: Some(on_output),
        wait: Duration::from_millis(300),
    });
    assert!(!ask(DOMAIN));
    assert!(
        panel.lock().unwrap().contains(&format!(
            "corral proxy: no answer about {DOMAIN} within 300ms; refused"
        )),
        "{}",
        panel.lock().unwrap()
    );
}

/// An app with a project open, python3 among the user's programs.
fn open_app() -> (Project, AppState) {
    let project = Project::new();
    let state = AppState::new(Store::without_keychain(
        project.config_dir(),
        project.data_dir(),
    ));
    state.open_project(project.root()).unwrap();
    state
        .store
        .save_programs(vec!["python3".into()], None)
        .unwrap();
    (project, state)
}

/// Starts in the background, granted the network in `conversation`, a
/// fetch of the domain after `delay_secs`; the hook is made as the app
/// makes it (stopped by the call's switch). Returns the run id.
fn start_in_background(
    state: &AppState,
    conversation: &str,
    delay_secs: f64,
    notify: corral_session::domains::Notify,
) -> String {
    let code = format!(
        "import time, urllib.request\ntime.sleep({delay_secs})\ntry:\n    urllib.request.urlopen('http://{DOMAIN}/', timeout=60)\nexcept Exception as e:\n    print('failed', e)"
    );
    let input = json!({"command": "python3", "args": ["-c", code], "background": true});
    let ticket = state
        .session()
        .unwrap()
        .check(Call::new("exec_shell", input).in_conversation(conversation))
        .unwrap();
    let mut shell = ShellRun::default();
    shell.egress.ask = Some(state.domains.hook(Asking {
        conversation: conversation.into(),
        notify,
        cancel: shell.cancel.clone(),
        on_output: None,
        wait: Duration::from_secs(60),
    }));
    let run = RunContext {
        shell,
        ..RunContext::default()
    };
    let started = tauri::async_runtime::block_on(state.session().unwrap().run(
        &ticket.ticket,
        Consent::Answer(Answer::with_network()),
        run,
    ))
    .unwrap();
    started["run_id"].as_str().unwrap().to_string()
}

/// The background command's whole output once it has ended.
fn ended_output(state: &AppState, run_id: &str) -> String {
    let background = state.session().unwrap().background();
    wait_until(30, "the command to end", || {
        !background.output(run_id, 0).unwrap().running
    });
    background.output(run_id, 0).unwrap().output
}

/// What the window was told, kept in order.
fn window() -> (
    Arc<Mutex<Vec<DomainQuestion>>>,
    corral_session::domains::Notify,
) {
    let told: Arc<Mutex<Vec<DomainQuestion>>> = Arc::default();
    let heard = told.clone();
    let notify = Arc::new(move |question: DomainQuestion| heard.lock().unwrap().push(question));
    (told, notify)
}

fn asked_ids(told: &Mutex<Vec<DomainQuestion>>) -> Vec<String> {
    told.lock()
        .unwrap()
        .iter()
        .filter_map(|q| match q {
            DomainQuestion::Asked { id, domain, .. } if domain == DOMAIN => Some(id.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_background_command_asks_after_its_call_returned_and_its_stop_drops_the_question() {
    if !fenced() {
        return;
    }
    let (_project, state) = open_app();

    // Asked a second after the call returned; allowed, the proxy goes on
    // to resolve the name (which resolves nowhere).
    let (told, notify) = window();
    let run_id = start_in_background(&state, "c1", 1.0, notify);
    assert!(
        asked_ids(&told).is_empty(),
        "asked before the call returned"
    );
    wait_until(30, "the question", || !asked_ids(&told).is_empty());
    let id = asked_ids(&told)[0].clone();
    assert!(state.domains.respond(&id, true));
    let output = ended_output(&state, &run_id);
    assert!(!output.contains("the user did not allow it"), "{output}");
    assert!(output.contains("could not resolve"), "{output}");
    assert_eq!(state.domains.answer("c1", DOMAIN), Some(true));

    // Stopped from the Processes panel while its question waits: the
    // question is taken down at once and can no longer be answered.
    let (told, notify) = window();
    let run_id = start_in_background(&state, "c2", 0.0, notify);
    wait_until(30, "the question", || !asked_ids(&told).is_empty());
    let id = asked_ids(&told)[0].clone();
    let stopped = Instant::now();
    state.session().unwrap().background().stop(&run_id).unwrap();
    wait_until(5, "the question to close", || {
        told.lock()
            .unwrap()
            .iter()
            .any(|q| matches!(q, DomainQuestion::Closed { id: closed } if *closed == id))
    });
    assert!(stopped.elapsed() < Duration::from_secs(5));
    assert!(
        !state.domains.respond(&id, true),
        "the question still waits"
    );
    assert_eq!(state.domains.answer("c2", DOMAIN), None);
}

#[test]
fn commands_meeting_the_same_domain_at_once_get_one_question() {
    if !fenced() {
        return;
    }
    let (_project, state) = open_app();
    let told: Arc<Mutex<Vec<DomainQuestion>>> = Arc::default();
    let (heard, answers) = (told.clone(), state.domains.clone());
    // The window answers each question 3 s after it is shown, so both
    // commands have met the domain by then.
    let notify = Arc::new(move |question: DomainQuestion| {
        if let DomainQuestion::Asked { id, .. } = &question {
            let (id, answers) = (id.clone(), answers.clone());
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_secs(3));
                answers.respond(&id, false);
            });
        }
        heard.lock().unwrap().push(question);
    });
    let first = start_in_background(&state, "c1", 0.0, notify.clone());
    let second = start_in_background(&state, "c1", 0.1, notify);
    for run_id in [first, second] {
        let output = ended_output(&state, &run_id);
        assert!(
            output.contains(&format!("corral proxy: refused GET http://{DOMAIN}"))
                && output.contains("the user did not allow it"),
            "{output}"
        );
    }
    assert_eq!(asked_ids(&told).len(), 1, "{:?}", told.lock().unwrap());
}
