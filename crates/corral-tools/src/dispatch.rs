//! One entry point for every tool call: parse the input, decide the policy,
//! enforce it, run the tool, return its JSON or the standardized error.

use crate::error::{Error, ErrorCode, Result};
use crate::policy::{self, Approval, Boundaries, Decision, Mode};
use crate::root::{ProjectRoot, RelPath};
use crate::spec::{risk_of, TOOL_NAMES};
use crate::{fs, search, shell};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

/// What surrounds one call: the session's mode and boundaries, whether the
/// user approved it, and for `exec_shell` the live-output sink and cancel.
#[derive(Default)]
pub struct CallContext {
    pub mode: Mode,
    pub approval: Approval,
    pub boundaries: Boundaries,
    pub shell: shell::ShellRun,
}

impl CallContext {
    /// A context with a mode and an approval, no boundaries.
    pub fn new(mode: Mode, approval: Approval) -> Self {
        CallContext {
            mode,
            approval,
            ..CallContext::default()
        }
    }
}

/// Parses a tool input, mapping serde's message to `invalid_input`.
pub fn parse<T: DeserializeOwned>(tool: &str, input: Value) -> Result<T> {
    // A null field means "not given" (adapters pass absent optionals as null).
    let input = match input {
        Value::Null => Value::Object(Default::default()),
        Value::Object(map) => {
            Value::Object(map.into_iter().filter(|(_, v)| !v.is_null()).collect())
        }
        other => other,
    };
    serde_json::from_value(input).map_err(|e| {
        Error::invalid_input(format!("invalid input for {tool}: {e}"))
            .hint(format!("Check {tool}'s input schema."))
            .detail("tool", tool)
    })
}

fn unknown_tool(name: &str) -> Error {
    Error::invalid_input(format!("there is no tool named `{name}`"))
        .hint(format!("Use one of: {}.", TOOL_NAMES.join(", ")))
        .detail("tool", name)
}

/// The policy decision for a proposed call, without running it.
pub fn decide(
    root: &ProjectRoot,
    name: &str,
    input: &Value,
    ctx: &CallContext,
) -> Result<Decision> {
    let risk = risk_of(name).ok_or_else(|| unknown_tool(name))?;
    // The path as typed and where it really leads: `notes.txt -> .env` is
    // judged as `.env` too, and a boundary cannot be stepped over by a link.
    let mut subjects = Vec::new();
    if let Some(path) = input.get("path").and_then(Value::as_str) {
        let rel = root.resolve(path)?;
        subjects.push(rel.display());
        if let Some(real) = real_path(root, &rel) {
            if !subjects.contains(&real) {
                subjects.push(real);
            }
        }
    }
    // A shell call the hard rules refuse fails here, before anyone is asked.
    let mut shell_secret = None;
    let shell_read_only = if name == "exec_shell" {
        let shell_input: shell::ExecShellInput = parse(name, input.clone())?;
        shell::check(root, &shell_input)?;
        shell_secret = shell::named_secret(root, &shell_input);
        // Without the namespaces there is no read-only profile to run it
        // in, so every command asks.
        shell::is_read_only(root, &shell_input) && shell::namespaces_available()
    } else {
        false
    };
    let decide_for = |subject: Option<&str>| {
        policy::decide(
            risk,
            name,
            subject,
            shell_read_only,
            ctx.mode,
            &ctx.boundaries,
        )
    };
    let decision = if subjects.is_empty() {
        decide_for(None)
    } else {
        subjects
            .iter()
            .map(|s| decide_for(Some(s)))
            .fold(Decision::Allow, Decision::stricter)
    };
    // A command that names a secret asks in every mode, as reading it does.
    Ok(match shell_secret {
        Some(arg) => decision.stricter(Decision::Ask {
            reason: format!("the command names `{arg}`, which looks like a secret"),
        }),
        None => decision,
    })
}

/// Whether a call touches a secret-like file: its `path` as typed or where
/// it really leads, or for `exec_shell` an argument naming one. A grant
/// "for this session" never covers such a call (the app asks every time).
pub fn touches_secret(root: &ProjectRoot, name: &str, input: &Value) -> bool {
    if let Some(Ok(rel)) = input
        .get("path")
        .and_then(Value::as_str)
        .map(|p| root.resolve(p))
    {
        if policy::is_secret_like(&rel.display())
            || real_path(root, &rel).is_some_and(|real| policy::is_secret_like(&real))
        {
            return true;
        }
    }
    name == "exec_shell"
        && parse::<shell::ExecShellInput>(name, input.clone())
            .is_ok_and(|call| shell::named_secret(root, &call).is_some())
}

/// Where a tool working on `rel` really lands: its deepest existing
/// ancestor with symlinks resolved, plus the part yet to be created.
/// `None` when it cannot be resolved (the tool itself then fails).
fn real_path(root: &ProjectRoot, rel: &RelPath) -> Option<String> {
    let mut probe = rel.clone();
    let mut tail: Vec<std::ffi::OsString> = Vec::new();
    loop {
        match root.canonical(&probe) {
            Ok(mut real) => {
                for name in tail.iter().rev() {
                    real = real.join(name);
                }
                return Some(real.display());
            }
            Err(e)
                if matches!(e.code, ErrorCode::NotFound | ErrorCode::NotADirectory)
                    && !probe.is_root() =>
            {
                tail.push(probe.file_name()?.to_owned());
                probe = probe.parent();
            }
            Err(_) => return None,
        }
    }
}

/// Runs one tool call through the policy.
pub fn call(root: &ProjectRoot, name: &str, input: Value, ctx: &CallContext) -> Result<Value> {
    let decision = decide(root, name, &input, ctx)?;
    policy::enforce(&decision, ctx.approval, name)?;
    match name {
        "read_file" => run(name, input, |i| fs::read_file(root, &i)),
        "write_file" => run(name, input, |i| fs::write_file(root, &i)),
        "edit_file" => run(name, input, |i| fs::edit_file(root, &i)),
        "delete_file" => run(name, input, |i| fs::delete_file(root, &i)),
        // What a walk finds beneath a blocked path is left out.
        "list_directory" => run(name, input, |i| {
            let mut out = fs::list_directory(root, &i)?;
            out.entries.retain(|e| !ctx.boundaries.blocks(&e.path));
            Ok(out)
        }),
        "glob" => run(name, input, |i| {
            let mut out = search::glob(root, &i)?;
            out.files.retain(|f| !ctx.boundaries.blocks(f));
            out.count = out.files.len();
            Ok(out)
        }),
        "search_files" => run(name, input, |i| {
            let mut out = search::search_files(root, &i)?;
            out.matches.retain(|m| !ctx.boundaries.blocks(&m.path));
            Ok(out)
        }),
        "exec_shell" => run(name, input, |i| shell::exec_shell(root, &i, &ctx.shell)),
        _ => Err(unknown_tool(name)),
    }
}

fn run<I: DeserializeOwned, O: Serialize>(
    name: &str,
    input: Value,
    tool: impl FnOnce(I) -> Result<O>,
) -> Result<Value> {
    let output = tool(parse(name, input)?)?;
    serde_json::to_value(output).map_err(|e| {
        Error::new(
            ErrorCode::Io,
            format!("could not encode {name}'s result: {e}"),
        )
    })
}
