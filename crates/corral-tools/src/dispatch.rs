//! One entry point for every tool call: parse the input, decide the policy,
//! enforce it, run the tool, return its JSON or the standardized error.

use crate::error::{Error, Result};
use crate::policy::{self, Decision};
use crate::root::{ProjectRoot, RelPath};
use crate::tool::{Assessment, DynTool, Parsed, Preview};
use crate::tools;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::tool::{parse, CallContext};

/// The registered tool called `name`, or the error naming the ones there are.
pub fn tool(name: &str) -> Result<&'static dyn DynTool> {
    tools::find(name).ok_or_else(|| {
        Error::invalid_input(format!("there is no tool named `{name}`"))
            .hint(format!(
                "Use one of: {}.",
                tools::names().collect::<Vec<_>>().join(", ")
            ))
            .detail("tool", name)
    })
}

/// One call as it will be judged and run: its tool, its input parsed once
/// and the policy facts of that input. Every later step reads this.
pub struct Prepared {
    pub tool: &'static dyn DynTool,
    pub input: Parsed,
    pub facts: Assessment,
}

/// Parses a call's input and gathers its facts, with the hard rules and
/// the saved rules of `ctx`: an input that does not parse, or a call the
/// tool's hard rules refuse (a command off the allowlist), fails here,
/// before anyone is asked.
pub fn prepare(
    root: &ProjectRoot,
    name: &str,
    input: &Value,
    ctx: &CallContext,
) -> Result<Prepared> {
    let tool = tool(name)?;
    let input = tool.parse(input)?;
    let facts = tool.assess_parsed(root, &input, ctx, true)?;
    Ok(Prepared { tool, input, facts })
}

/// The policy decision for a proposed call, without running it. An input
/// that does not parse, or a call the tool's hard rules refuse (a command
/// off the allowlist), fails here, before anyone is asked.
pub fn decide(
    root: &ProjectRoot,
    name: &str,
    input: &Value,
    ctx: &CallContext,
) -> Result<Decision> {
    let prepared = prepare(root, name, input, ctx)?;
    judge(root, prepared.tool, &prepared.facts, ctx).map(|judged| judged.decision)
}

/// A decision, the saved rule that made it `allow`, and whether the call
/// asks for the network.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    pub decision: Decision,
    pub rule: Option<String>,
    pub network: bool,
}

/// The policy's decision on a call's facts. The paths are located now, so
/// a call judged again just before it runs is judged where its paths
/// lead then.
pub fn judge(
    root: &ProjectRoot,
    tool: &dyn DynTool,
    facts: &Assessment,
    ctx: &CallContext,
) -> Result<Judged> {
    judge_as(root, tool.name(), tool.risk(), ctx.mode, facts, ctx)
}

/// [`judge`] of a tool known by its name and risk, in `mode`: one of the
/// user's MCP servers' tools is judged by this same code as Corral's own
/// (its paths in a mode of their own, its server's rule deciding the rest).
pub fn judge_as(
    root: &ProjectRoot,
    name: &str,
    risk: policy::Risk,
    mode: policy::Mode,
    facts: &Assessment,
    ctx: &CallContext,
) -> Result<Judged> {
    // The path as typed and where it really leads: `notes.txt -> .env` is
    // judged as `.env` too, and a boundary cannot be stepped over by a link.
    let mut subjects = Vec::new();
    for path in &facts.paths {
        let rel = root.resolve(path)?;
        let shown = rel.display();
        if !subjects.contains(&shown) {
            subjects.push(shown);
        }
        if let Some(real) = real_path(root, &rel) {
            // A hard link to a secret is judged as the secret.
            let linked = crate::secret_links::secret_name_of(root, &real);
            for subject in std::iter::once(real).chain(linked) {
                if !subjects.contains(&subject) {
                    subjects.push(subject);
                }
            }
        }
    }
    let decide_for = |subject: Option<&str>| {
        policy::decide(risk, name, subject, facts.read_only, mode, &ctx.boundaries)
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
    let decision = match &facts.named_secret {
        Some(arg) => decision.stricter(Decision::Ask {
            reason: format!("the command names `{arg}`, which looks like a secret"),
        }),
        None => decision,
    };
    // So does one that must write what the user's own tools run later.
    let decision = match &facts.asks_because {
        Some(reason) => decision.stricter(Decision::Ask {
            reason: reason.clone(),
        }),
        None => decision,
    };
    // A saved rule turns an ask into an allow (it never covers a secret, a
    // path outside or the network: `shell::rule_covering`).
    let always = facts.named_secret.is_some() || facts.asks_because.is_some();
    let (decision, rule) = match (decision, facts.rule.clone()) {
        (Decision::Ask { .. }, Some(rule)) if !always => (Decision::Allow, Some(rule)),
        (decision, _) => (decision, None),
    };
    // The network is the user's to grant, call by call.
    let decision = match decision {
        Decision::Deny { .. } => decision,
        _ if facts.network && !ctx.shell.network => Decision::Ask {
            reason: "the command fetches from the network: approving it runs it in the network \
                     profile (the host's network)"
                .to_string(),
        },
        _ => decision,
    };
    Ok(Judged {
        decision,
        rule,
        network: facts.network,
    })
}

/// What the approval card shows of a proposed call: the decision and the
/// change the call would make, computed by the code that will make it, on
/// the same bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
pub struct PolicyCheck {
    #[serde(flatten)]
    pub decision: Decision,
    /// The would-be change (`write_file`, `edit_file`, `delete_file`);
    /// absent for other tools and for a denied call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub preview: Option<Preview>,
    /// Why there is no preview where there would be one: the error the
    /// call itself will fail with (an edit that will miss, a binary file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub preview_error: Option<Error>,
    /// The saved rule that lets the call run without asking (`npm test`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub rule: Option<String>,
    /// The call fetches from the network: approved, it runs in the network
    /// profile.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[ts(as = "Option<bool>", optional)]
    pub network: bool,
}

/// The policy decision for a proposed call, with its preview.
pub fn check(
    root: &ProjectRoot,
    name: &str,
    input: &Value,
    ctx: &CallContext,
) -> Result<PolicyCheck> {
    check_prepared(root, &prepare(root, name, input, ctx)?, ctx)
}

/// [`check`] of a prepared call: its input is not read again.
pub fn check_prepared(
    root: &ProjectRoot,
    prepared: &Prepared,
    ctx: &CallContext,
) -> Result<PolicyCheck> {
    let Judged {
        decision,
        rule,
        network,
    } = judge(root, prepared.tool, &prepared.facts, ctx)?;
    let preview = match decision {
        Decision::Deny { .. } => Ok(None),
        _ => prepared.tool.preview_parsed(root, &prepared.input),
    };
    let (preview, preview_error) = match preview {
        Ok(preview) => (preview, None),
        Err(e) => (None, Some(e)),
    };
    Ok(PolicyCheck {
        decision,
        preview,
        preview_error,
        rule,
        network,
    })
}

/// Whether a call touches a secret-like file: its `path` as typed or where
/// it really leads, or for `exec_shell` an argument naming one. A grant
/// "for this session" never covers such a call (the app asks every time).
pub fn touches_secret(root: &ProjectRoot, name: &str, input: &Value) -> bool {
    let Ok(tool) = tool(name) else {
        return false;
    };
    // An input that does not parse will fail when it runs; what it names
    // is still judged, by its `path`, so a grant never covers it.
    let facts = tool
        .assess(root, input, false)
        .unwrap_or_else(|_| Assessment {
            paths: input
                .get("path")
                .and_then(Value::as_str)
                .map(str::to_string)
                .into_iter()
                .collect(),
            ..Assessment::default()
        });
    names_secret(root, &facts)
}

/// Whether a call with these facts asks every time, whatever grant or
/// saved rule exists: it touches a secret-like file ([`names_secret`]), or
/// one that another program runs by itself (the auto-run table: agent
/// configuration, `.vscode/`, `.mcp.json`...), by a path as typed or where
/// it really leads.
pub fn asks_every_time(root: &ProjectRoot, facts: &Assessment) -> bool {
    facts.asks_because.is_some()
        || names_secret(root, facts)
        || facts.paths.iter().any(|path| match root.resolve(path) {
            Ok(rel) => {
                policy::auto_run(&rel.display()).is_some()
                    || real_path(root, &rel).is_some_and(|real| policy::auto_run(&real).is_some())
            }
            Err(_) => false,
        })
}

/// Whether a call with these facts touches a secret-like file: a path as
/// typed or where it really leads, or an argument naming one.
pub fn names_secret(root: &ProjectRoot, facts: &Assessment) -> bool {
    facts.named_secret.is_some()
        || facts.paths.iter().any(|path| match root.resolve(path) {
            Ok(rel) => {
                policy::is_secret_like(&rel.display())
                    || real_path(root, &rel).is_some_and(|real| {
                        policy::is_secret_like(&real)
                            || crate::secret_links::secret_name_of(root, &real).is_some()
                    })
            }
            Err(_) => false,
        })
}

/// Where a tool working on `rel` really lands: its deepest existing
/// ancestor with symlinks resolved, plus the part yet to be created.
/// The file tools open the lexical path, so that is the one located (for
/// `link/../x` they open `x`, wherever `link` leads). `None` when it cannot
/// be resolved (the tool itself then fails).
fn real_path(root: &ProjectRoot, rel: &RelPath) -> Option<String> {
    let located = root.locate(&rel.display()).ok()?;
    located.real_path().map(|real| real.display())
}

/// Runs one tool call through the policy. A call that can change the
/// project is preceded by a checkpoint when the context has a store; if
/// the checkpoint fails, the call does not run. Validate, then
/// checkpoint: a call its input or limits refuse ([`DynTool::validate`])
/// takes none.
pub fn call(root: &ProjectRoot, name: &str, input: Value, ctx: &CallContext) -> Result<Value> {
    let prepared = prepare(root, name, &input, ctx)?;
    let judged = judge(root, prepared.tool, &prepared.facts, ctx)?;
    policy::enforce(&judged.decision, ctx.approval, name)?;
    run_prepared(root, prepared, &input, ctx)
}

/// Runs a prepared call the policy allowed: validated and checkpointed
/// first when it can change the project (`input`, its JSON, is what the
/// checkpoint records).
pub fn run_prepared(
    root: &ProjectRoot,
    prepared: Prepared,
    input: &Value,
    ctx: &CallContext,
) -> Result<Value> {
    let Prepared {
        tool,
        input: parsed,
        facts,
    } = prepared;
    let name = tool.name();
    if let Some(hook) = &ctx.checkpoint {
        if changes(tool, &facts) {
            tool.validate_parsed(root, &parsed)?;
            checkpoint(root, hook, name, input)?;
        }
    }
    // The files a write or an edit changed, for their diagnostics.
    let changed = (ctx.lsp.is_some() && tool.risk() == policy::Risk::Write).then_some(facts.paths);
    let mut output = tool.run_parsed(root, parsed, ctx)?;
    if let (Some(lsp), Some(paths)) = (&ctx.lsp, changed) {
        crate::lsp::attach(root, lsp, &paths, &mut output);
    }
    Ok(output)
}

/// Takes the checkpoint before a call of `name` that can change the
/// project; if none can be taken, the error says the call did not run.
pub fn checkpoint(
    root: &ProjectRoot,
    hook: &crate::checkpoint::Hook,
    name: &str,
    input: &Value,
) -> Result<()> {
    hook.before(root, name, input).map(drop).map_err(|e| {
        let message = format!(
            "no checkpoint could be taken, so {name} did not run: {}",
            e.message
        );
        Error { message, ..e }
    })
}

/// Whether a call can change the project, from the facts its check
/// gathered: writes can, reads cannot, a command can unless it is
/// read-only.
pub fn changes(tool: &dyn DynTool, facts: &Assessment) -> bool {
    changes_as(tool.risk(), facts)
}

/// [`changes`] of a tool known by its risk (an MCP server's tool).
pub fn changes_as(risk: policy::Risk, facts: &Assessment) -> bool {
    match risk {
        policy::Risk::Read => false,
        policy::Risk::Write => true,
        policy::Risk::Shell => !facts.read_only,
    }
}
