//! What a tool is: one [`Tool`] implementation per tool (in `tools/`), so
//! that its name, risk, description, input schema, the paths it touches,
//! its policy facts, its dry-run preview and its run live in one file.
//!
//! [`DynTool`] is the same thing with the input as JSON, implemented for
//! every [`Tool`]: the registry holds `&dyn DynTool`s, and `spec`,
//! `dispatch`, the CLI and the app read only that.

use crate::display::{ResultView, Subject, ToolDisplay};
use crate::error::{Error, ErrorCode, Result};
use crate::policy::{Approval, Boundaries, Mode, Risk};
use crate::root::ProjectRoot;
use crate::shell::ShellRun;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::any::Any;
use std::borrow::Cow;

/// One tool as the LLM sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    #[ts(type = "object")]
    pub input_schema: Value,
    pub risk: Risk,
    /// How the window shows its calls (never sent to the model).
    pub display: ToolDisplay,
}

/// What surrounds one call: the session's mode and boundaries, whether the
/// user approved it, for `exec_shell` the live-output sink and cancel, and
/// where to take a checkpoint before a call that can change the project.
#[derive(Default)]
pub struct CallContext {
    pub mode: Mode,
    pub approval: Approval,
    pub boundaries: Boundaries,
    pub shell: ShellRun,
    /// `None`: no checkpoint (a caller that asked for none).
    pub checkpoint: Option<crate::checkpoint::Hook>,
    /// Where `search_files` keeps its trigram index; `None`: no index.
    pub search_index: Option<crate::search::IndexConfig>,
    /// The `base` of the preview the user approved ([`Preview::base`]):
    /// a write, edit or delete then changes only that very file, and fails
    /// with `stale_file`, changing nothing, if the file changed since.
    /// `None`: no preview was shown (a call allowed without asking).
    pub base: Option<String>,
    /// The project's language servers: a write's or an edit's result then
    /// carries its files' diagnostics, and `diagnostics` and `symbols`
    /// answer. `None`: no servers (those tools fail with `language_server`).
    pub lsp: Option<crate::lsp::Lsp>,
    /// Where `web_fetch` keeps the pages of the call's conversation and
    /// finds them again. `None`: no conversation, every call fetches.
    pub web_cache: Option<crate::web::CacheScope>,
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

pub use crate::fs::Preview;

/// One tool. Implement it in `tools/<name>.rs` and add the value to
/// `tools::REGISTRY`; nothing else needs to know the tool exists.
pub trait Tool: Sync {
    /// What the model sends; its JSON Schema is what the model is shown.
    type Input: DeserializeOwned + schemars::JsonSchema + Send + Sync + 'static;
    /// What the tool returns, as JSON.
    type Output: Serialize;
    /// The name the model calls it by.
    const NAME: &'static str;
    /// Where the policy starts from.
    const RISK: Risk;
    /// What the model is told (whitespace is collapsed in the spec), as
    /// [`Tool::description`] gives it.
    const DESCRIPTION: &'static str;
    /// What a call is about, as the window shows it.
    const SUBJECT: Subject = Subject::Path;
    /// How the window sums up and previews its result.
    const RESULT: ResultView = ResultView::Json;

    /// What the model is told: [`Tool::DESCRIPTION`], unless a part of it
    /// is made from another table (`exec_shell` names the built-in
    /// programs from [`crate::shell::PROGRAMS`]).
    fn description() -> Cow<'static, str> {
        Cow::Borrowed(Self::DESCRIPTION)
    }

    /// The paths the call works on, as typed; the policy judges each, and
    /// where each really leads.
    fn paths(&self, _input: &Self::Input) -> Vec<String> {
        Vec::new()
    }

    /// Hard rules that refuse the call before anyone is asked to approve it.
    fn precheck(&self, _root: &ProjectRoot, _input: &Self::Input) -> Result<()> {
        Ok(())
    }

    /// What the input alone refuses (a size over the limits, a path the
    /// tool never writes), checked once the call is allowed and before
    /// the checkpoint is taken: a refused call takes none. The run checks
    /// it again; a preview shows the same refusal.
    fn validate(&self, _root: &ProjectRoot, _input: &Self::Input) -> Result<()> {
        Ok(())
    }

    /// What the policy needs to know of the call ([`Assessment`]); with
    /// `precheck`, [`Tool::precheck`] refuses it first. The default knows
    /// the paths and nothing more. A tool whose input tells more overrides
    /// it and reads the input once for all of it: `exec_shell` parses
    /// git's arguments once for its argument rules, its read-only verdict,
    /// the secret it names, the network and the caller's saved rules.
    fn assessment(
        &self,
        root: &ProjectRoot,
        input: &Self::Input,
        _ctx: &CallContext,
        precheck: bool,
    ) -> Result<Assessment> {
        if precheck {
            self.precheck(root, input)?;
        }
        Ok(Assessment {
            paths: self.paths(input),
            ..Assessment::default()
        })
    }

    /// The change the call would make, without making it.
    fn preview(&self, _root: &ProjectRoot, _input: &Self::Input) -> Result<Option<Preview>> {
        Ok(None)
    }

    /// Runs the call (the policy has already allowed it).
    fn run(
        &self,
        root: &ProjectRoot,
        input: Self::Input,
        ctx: &CallContext,
    ) -> Result<Self::Output>;

    /// An input that makes this tool work on `path`: the security suite
    /// feeds every hostile path through every registered tool with it.
    fn probe(&self, path: &str) -> Value;
}

/// What the policy needs to know of one call, from one parse of its input.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Assessment {
    /// The paths it works on, as typed.
    pub paths: Vec<String>,
    /// It changes nothing (only a [`Risk::Shell`] tool says so: reads and
    /// writes are known by their risk).
    pub read_only: bool,
    /// An argument naming a secret-like file the paths do not show (a
    /// command's `HEAD:.env`); such a call asks in every mode.
    pub named_secret: Option<String>,
    /// Why it asks in every mode, whatever grant or saved rule exists,
    /// besides a secret (a git call that must write git's own `config`).
    pub asks_because: Option<String>,
    /// The caller's saved rule that lets it run without asking.
    pub rule: Option<String>,
    /// It fetches from the network by its nature (it asks, naming the
    /// network, unless the caller granted it).
    pub network: bool,
}

/// A tool's input parsed once into the tool's own type: a call is checked,
/// previewed, validated and run from this one value, never from its JSON
/// again.
pub struct Parsed {
    tool: &'static str,
    input: Box<dyn Any + Send + Sync>,
}

impl std::fmt::Debug for Parsed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parsed").field("tool", &self.tool).finish()
    }
}

impl Parsed {
    /// The tool whose input this is.
    pub fn tool(&self) -> &'static str {
        self.tool
    }

    /// The input as `T`, if it is one (`ExecShellInput` for a command).
    pub fn get<T: 'static>(&self) -> Option<&T> {
        self.input.downcast_ref()
    }

    fn typed<T: Tool>(&self) -> Result<&T::Input> {
        self.input
            .downcast_ref()
            .ok_or_else(|| mismatch(T::NAME, self.tool))
    }
}

/// A parsed input handed to another tool than the one that parsed it: a
/// caller's mistake, refused rather than run.
fn mismatch(tool: &str, parsed_for: &str) -> Error {
    Error::invalid_input(format!(
        "an input parsed for `{parsed_for}` was given to `{tool}`"
    ))
    .detail("tool", tool)
}

/// A [`Tool`] with its input as JSON, so tools of different types can sit
/// in one registry. [`DynTool::parse`] reads the JSON once; the `*_parsed`
/// methods work on that. The JSON methods parse first, for callers that
/// make one step of a call only.
pub trait DynTool: Sync {
    fn name(&self) -> &'static str;
    fn risk(&self) -> Risk;
    fn spec(&self) -> ToolSpec;
    /// The input parsed into the tool's type, or `invalid_input`.
    fn parse(&self, input: &Value) -> Result<Parsed>;
    /// The policy facts of a parsed input ([`Tool::assessment`]), with the
    /// saved rules and added programs of `ctx`; with `precheck`, the
    /// tool's hard rules ([`Tool::precheck`]) run first and their refusal
    /// is the error.
    fn assess_parsed(
        &self,
        root: &ProjectRoot,
        input: &Parsed,
        ctx: &CallContext,
        precheck: bool,
    ) -> Result<Assessment>;
    fn preview_parsed(&self, root: &ProjectRoot, input: &Parsed) -> Result<Option<Preview>>;
    /// [`Tool::validate`] of a parsed input.
    fn validate_parsed(&self, root: &ProjectRoot, input: &Parsed) -> Result<()>;
    fn run_parsed(&self, root: &ProjectRoot, input: Parsed, ctx: &CallContext) -> Result<Value>;
    fn probe(&self, path: &str) -> Value;

    /// Parses the input and gathers the policy facts, with no saved rules
    /// or added programs.
    fn assess(&self, root: &ProjectRoot, input: &Value, precheck: bool) -> Result<Assessment> {
        self.assess_parsed(root, &self.parse(input)?, &CallContext::default(), precheck)
    }
    /// [`DynTool::assess`] with the hard rules, the saved rules and the
    /// added programs of the call's context.
    fn assess_in(
        &self,
        root: &ProjectRoot,
        input: &Value,
        ctx: &CallContext,
    ) -> Result<Assessment> {
        self.assess_parsed(root, &self.parse(input)?, ctx, true)
    }
    fn preview(&self, root: &ProjectRoot, input: &Value) -> Result<Option<Preview>> {
        self.preview_parsed(root, &self.parse(input)?)
    }
    /// Parses the input and runs [`Tool::validate`].
    fn validate(&self, root: &ProjectRoot, input: &Value) -> Result<()> {
        self.validate_parsed(root, &self.parse(input)?)
    }
    fn run(&self, root: &ProjectRoot, input: Value, ctx: &CallContext) -> Result<Value> {
        self.run_parsed(root, self.parse(&input)?, ctx)
    }
}

impl<T: Tool> DynTool for T {
    fn name(&self) -> &'static str {
        T::NAME
    }
    fn risk(&self) -> Risk {
        T::RISK
    }
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: T::NAME.to_string(),
            description: T::description()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
            input_schema: schema::<T::Input>(),
            risk: T::RISK,
            display: ToolDisplay {
                subject: T::SUBJECT,
                result: T::RESULT,
                ..ToolDisplay::default()
            },
        }
    }
    fn parse(&self, input: &Value) -> Result<Parsed> {
        let input: T::Input = parse(T::NAME, input.clone())?;
        Ok(Parsed {
            tool: T::NAME,
            input: Box::new(input),
        })
    }
    fn assess_parsed(
        &self,
        root: &ProjectRoot,
        input: &Parsed,
        ctx: &CallContext,
        precheck: bool,
    ) -> Result<Assessment> {
        self.assessment(root, input.typed::<T>()?, ctx, precheck)
    }
    fn preview_parsed(&self, root: &ProjectRoot, input: &Parsed) -> Result<Option<Preview>> {
        Tool::preview(self, root, input.typed::<T>()?)
    }
    fn validate_parsed(&self, root: &ProjectRoot, input: &Parsed) -> Result<()> {
        Tool::validate(self, root, input.typed::<T>()?)
    }
    fn run_parsed(&self, root: &ProjectRoot, input: Parsed, ctx: &CallContext) -> Result<Value> {
        let from = input.tool;
        let input = input
            .input
            .downcast::<T::Input>()
            .map_err(|_| mismatch(T::NAME, from))?;
        let output = Tool::run(self, root, *input, ctx)?;
        serde_json::to_value(output).map_err(|e| {
            Error::new(
                ErrorCode::Io,
                format!("could not encode {}'s result: {e}", T::NAME),
            )
        })
    }
    fn probe(&self, path: &str) -> Value {
        Tool::probe(self, path)
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

/// The JSON Schema of an input type, without the meta fields the providers
/// do not want.
fn schema<T: schemars::JsonSchema>() -> Value {
    let mut value = serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null);
    if let Some(obj) = value.as_object_mut() {
        obj.remove("$schema");
        obj.remove("title");
    }
    value
}
