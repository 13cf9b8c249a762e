//! The embedded JS engine (QuickJS, through rquickjs) that runs the app's
//! agent loop outside the window. The script (`js/exec.js`, bundled from
//! `ui/src/exec/` by `npm run build:exec`) gets one object, `__corralHost`:
//! `invoke` (an IPC command, served by a [`Host`]), `emit` (an event of the
//! run), `timer`/`clearTimer` (what its setTimeout stands on) and `uuid`.
//! Everything runs on the caller's thread; the host's futures are polled
//! by the engine's scheduler, inside the caller's tokio runtime.

use corral_tools::{Error, ErrorCode};
use rquickjs::function::{Async, Opt};
use rquickjs::{
    async_with, AsyncContext, AsyncRuntime, CatchResultExt, Ctx, Function, Object, Promise,
};
use serde_json::{json, Value};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::oneshot;

/// The bundled script: the agent loop and its entry (`corralExec`).
pub const SCRIPT: &str = include_str!("../../js/exec.js");

/// What the script reaches Rust through: `corral-cli exec` serves it, and
/// so would any other host of the loop without a window (ACP).
pub(crate) trait Host: Send + Sync + 'static {
    /// Runs one IPC command of the app's (docs/ipc.md) with its JSON
    /// arguments; a streamed command hands each event to `events` as it
    /// arrives, before it answers.
    async fn invoke(
        &self,
        command: &str,
        args: Value,
        events: &dyn Fn(Value),
    ) -> Result<Value, Error>;
    /// One event of the run, as the script reports it.
    fn emit(&self, event: Value);
}

/// Evaluates `script` ([`SCRIPT`]) and runs its `entry(request)` (a
/// function of the global scope resolving to a string) to its end;
/// resolves to that string.
pub(crate) async fn run<H: Host>(
    host: Arc<H>,
    script: &'static str,
    entry: &str,
    request: Value,
) -> Result<String, Error> {
    let runtime = AsyncRuntime::new().map_err(engine_error)?;
    // The bundle's modules nest deeply; QuickJS's default stack is small.
    runtime.set_max_stack_size(4 * 1024 * 1024).await;
    let context = AsyncContext::full(&runtime).await.map_err(engine_error)?;
    let answer: Arc<Mutex<Option<Result<String, Error>>>> = Arc::default();
    let (done, finished) = oneshot::channel::<()>();
    let entry = entry.to_string();
    let request = request.to_string();
    let kept = answer.clone();
    async_with!(context => |ctx| {
        let started = start(&ctx, host, script, &entry, &request);
        match started.catch(&ctx) {
            Ok(promise) => {
                let ctx2 = ctx.clone();
                ctx.spawn(async move {
                    let outcome = promise.into_future::<String>().await.catch(&ctx2);
                    let outcome = outcome.map_err(|e| thrown(&ctx2, e));
                    *kept.lock().unwrap_or_else(PoisonError::into_inner) = Some(outcome);
                    let _ = done.send(());
                });
            }
            Err(e) => {
                *kept.lock().unwrap_or_else(PoisonError::into_inner) = Some(Err(script_error(e.to_string())));
            }
        }
    })
    .await;
    // Until the entry's promise settles: a timer left running (a wait that
    // lost its race) must not hold the process open.
    tokio::select! {
        () = runtime.idle() => {}
        _ = finished => {}
    }
    let outcome = answer.lock().unwrap_or_else(PoisonError::into_inner).take();
    outcome.unwrap_or_else(|| {
        Err(script_error(
            "the script ended without an answer (a promise that never settled)".into(),
        ))
    })
}

/// Installs the host object, evaluates the script and calls its entry.
fn start<'js, H: Host>(
    ctx: &Ctx<'js>,
    host: Arc<H>,
    script: &str,
    entry: &str,
    request: &str,
) -> rquickjs::Result<Promise<'js>> {
    let globals = ctx.globals();
    globals.set("__corralHost", host_object(ctx, host)?)?;
    ctx.eval::<(), _>(script)?;
    let run: Function = globals.get(entry)?;
    run.call((request.to_string(),))
}

/// `__corralHost`: the functions of `Host` in ui/src/exec/host.ts.
fn host_object<'js, H: Host>(ctx: &Ctx<'js>, host: Arc<H>) -> rquickjs::Result<Object<'js>> {
    let object = Object::new(ctx.clone())?;
    let invoker = host.clone();
    // The listener may be absent or `undefined`.
    let invoke = move |command: String, args: String, on_event: Opt<rquickjs::Value<'js>>| {
        let host = invoker.clone();
        let listener = on_event.0.and_then(rquickjs::Value::into_function);
        async move {
            let args: Value = serde_json::from_str(&args).unwrap_or(Value::Null);
            let events = |event: Value| {
                if let Some(listener) = &listener {
                    // A listener that throws is the script's bug; the run goes on.
                    let _ = listener.call::<_, ()>((event.to_string(),));
                }
            };
            let answer = match host.invoke(&command, args, &events).await {
                Ok(value) => json!({ "ok": value }),
                Err(error) => json!({ "err": error.to_json() }),
            };
            rquickjs::Result::Ok(answer.to_string())
        }
    };
    object.set("invoke", Function::new(ctx.clone(), Async(invoke))?)?;
    object.set(
        "emit",
        Function::new(ctx.clone(), move |event: String| {
            host.emit(serde_json::from_str(&event).unwrap_or(Value::String(event)));
        })?,
    )?;
    let timers: Rc<RefCell<HashMap<u32, oneshot::Sender<()>>>> = Rc::default();
    let kept = timers.clone();
    let timer = move |id: u32, ms: f64| {
        let (clear, cleared) = oneshot::channel();
        kept.borrow_mut().insert(id, clear);
        let kept = kept.clone();
        async move {
            let wait = Duration::from_millis(ms.clamp(0.0, 1e12) as u64);
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                _ = cleared => {}
            }
            kept.borrow_mut().remove(&id);
        }
    };
    object.set("timer", Function::new(ctx.clone(), Async(timer))?)?;
    object.set(
        "clearTimer",
        Function::new(ctx.clone(), move |id: u32| {
            if let Some(clear) = timers.borrow_mut().remove(&id) {
                let _ = clear.send(());
            }
        })?,
    )?;
    object.set(
        "uuid",
        Function::new(ctx.clone(), || uuid::Uuid::new_v4().to_string())?,
    )?;
    Ok(object)
}

fn engine_error(e: rquickjs::Error) -> Error {
    Error::new(ErrorCode::Io, format!("the JS engine could not start: {e}"))
}

/// What the script threw: an error a command answered with (a wire
/// error, `code` and `message`: the history's, a tool's, the provider's)
/// is that error, as the user should see it; anything else is the
/// script's bug, shown whole (never as `Object(0x…)`).
fn thrown<'js>(ctx: &Ctx<'js>, caught: rquickjs::CaughtError<'js>) -> Error {
    if let rquickjs::CaughtError::Value(value) = &caught {
        let text = ctx.json_stringify(value.clone()).ok().flatten();
        let text = text.and_then(|t| t.to_string().ok());
        if let Some(text) = text {
            if let Ok(error) = serde_json::from_str::<Error>(&text) {
                return error;
            }
            return script_error(format!("it threw {text}"));
        }
    }
    script_error(caught.to_string())
}

fn script_error(message: String) -> Error {
    Error::new(ErrorCode::Io, format!("the agent script failed: {message}"))
        .hint("This is a bug in Corral; please report it with this message.")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// Answers `echo` with its arguments after streaming them back as two
    /// events; keeps what was emitted.
    #[derive(Default)]
    struct EchoHost {
        emitted: Mutex<Vec<Value>>,
    }

    impl Host for EchoHost {
        async fn invoke(
            &self,
            command: &str,
            args: Value,
            events: &dyn Fn(Value),
        ) -> Result<Value, Error> {
            match command {
                "echo" => {
                    events(json!({ "part": 1 }));
                    tokio::task::yield_now().await;
                    events(json!({ "part": 2 }));
                    Ok(args)
                }
                other => Err(Error::new(ErrorCode::NotFound, format!("no `{other}`"))),
            }
        }
        fn emit(&self, event: Value) {
            self.emitted.lock().unwrap().push(event);
        }
    }

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(f)
    }

    const ROUND_TRIP: &str = r#"
        globalThis.entry = async (request) => {
            const host = globalThis.__corralHost;
            const parts = [];
            const answer = JSON.parse(await host.invoke("echo", request, (e) => parts.push(JSON.parse(e).part)));
            const missing = JSON.parse(await host.invoke("nothing", "{}"));
            host.emit(JSON.stringify({ parts, said: answer.ok.said, missing: missing.err.code, uuid: host.uuid() }));
            await host.timer(1, 5);
            return "finished";
        };
    "#;

    #[test]
    fn a_host_call_goes_there_and_back_with_its_events_in_order() {
        let host = Arc::new(EchoHost::default());
        let answer = block_on(run(
            host.clone(),
            ROUND_TRIP,
            "entry",
            json!({ "said": "hi" }),
        ))
        .unwrap();
        assert_eq!(answer, "finished");
        let emitted = host.emitted.lock().unwrap().clone();
        assert_eq!(emitted.len(), 1);
        assert_eq!(emitted[0]["parts"], json!([1, 2]));
        assert_eq!(emitted[0]["said"], "hi");
        assert_eq!(emitted[0]["missing"], "not_found");
        assert_eq!(emitted[0]["uuid"].as_str().unwrap().len(), 36);
    }

    #[test]
    fn a_cleared_timer_holds_nothing_up() {
        let script = r#"
            globalThis.entry = async () => {
                const host = globalThis.__corralHost;
                const long = host.timer(7, 60000);
                host.clearTimer(7);
                await long;
                return "cleared";
            };
        "#;
        let started = Instant::now();
        let answer = block_on(run(
            Arc::new(EchoHost::default()),
            script,
            "entry",
            Value::Null,
        ))
        .unwrap();
        assert_eq!(answer, "cleared");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn a_script_that_throws_is_a_standardized_error() {
        let script = "globalThis.entry = async () => { throw new Error('boom'); };";
        let error = block_on(run(
            Arc::new(EchoHost::default()),
            script,
            "entry",
            Value::Null,
        ))
        .unwrap_err();
        assert_eq!(error.code, ErrorCode::Io);
        assert!(error.message.contains("boom"), "{}", error.message);
    }

    #[test]
    fn the_bundle_defines_its_entry() {
        // Not run to its end (that needs a session): evaluated, with the entry in place.
        let script: &'static str = Box::leak(
            format!("{SCRIPT}\nglobalThis.probe = async () => typeof globalThis.corralExec;")
                .into_boxed_str(),
        );
        let answer = block_on(run(
            Arc::new(EchoHost::default()),
            script,
            "probe",
            Value::Null,
        ))
        .unwrap();
        assert_eq!(answer, "function");
    }
}
