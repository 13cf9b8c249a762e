//! Corral's tools as an MCP server: every tool of the registry, with its
//! JSON Schema and description, served over stdio through the official Rust
//! SDK (`rmcp`). Calls go through `dispatch::call`, so the policy, the
//! confinement and the standardized error are exactly those of the app and
//! `corral-cli call`.
//!
//! - `tools/list`: the registry's specs; annotations from each tool's risk
//!   (`read` → `readOnlyHint`, `write` and `shell` → `destructiveHint`).
//! - `tools/call`: the result as structured content (and as its JSON text);
//!   a failure as a tool error whose structured content is the standardized
//!   error. A call the policy would ask about fails with `approval_required`:
//!   the server has no one to ask, so the hint names `--mode`.

use corral_tools::dispatch::{self, CallContext};
use corral_tools::policy::{Approval, Boundaries, Mode, Risk};
use corral_tools::{spec, tools, Error, ErrorCode, ProjectRoot};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{Map, Value};
use std::sync::Arc;

/// What every call is judged with: the session's mode and boundaries, and
/// whether commands get the network.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub mode: Mode,
    pub boundaries: Boundaries,
    pub network: bool,
}

/// The server for one project folder.
#[derive(Clone)]
pub struct CorralServer {
    root: Arc<ProjectRoot>,
    options: Arc<Options>,
}

impl CorralServer {
    pub fn new(root: ProjectRoot, options: Options) -> Self {
        CorralServer {
            root: Arc::new(root),
            options: Arc::new(options),
        }
    }

    /// The registry's tools as MCP tools.
    pub fn tools() -> Vec<Tool> {
        spec::specs()
            .into_iter()
            .map(|spec| {
                let schema = match spec.input_schema {
                    Value::Object(schema) => schema,
                    _ => Map::new(),
                };
                let annotations = ToolAnnotations::new()
                    .read_only(spec.risk == Risk::Read)
                    .destructive(spec.risk != Risk::Read)
                    .open_world(false);
                Tool::new(spec.name, spec.description, Arc::new(schema))
                    .with_annotations(annotations)
            })
            .collect()
    }

    /// Runs one call through the policy and the tool, off the async runtime.
    pub async fn call(&self, name: String, input: Value) -> Result<Value, Error> {
        let root = self.root.clone();
        let options = self.options.clone();
        let run = tokio::task::spawn_blocking(move || {
            let mut ctx = CallContext::new(options.mode, Approval::None);
            ctx.boundaries = options.boundaries.clone();
            ctx.shell.network = options.network;
            dispatch::call(&root, &name, input, &ctx)
        });
        let result = run.await.map_err(|e| {
            Error::new(
                ErrorCode::Io,
                format!("the tool call stopped unexpectedly: {e}"),
            )
        })?;
        result.map_err(|error| match error.code {
            ErrorCode::ApprovalRequired => error.hint(
                "This server cannot ask anyone: start it with a mode that allows the call \
                 (`corral-cli mcp --mode auto_edit` for writes, `--mode full_auto` for commands).",
            ),
            _ => error,
        })
    }
}

impl ServerHandler for CorralServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("corral", env!("CARGO_PKG_VERSION")))
            .with_instructions(format!(
                "Corral's file, search and shell tools, confined by the kernel to the project folder {}. \
                 Paths are relative to it; nothing outside is reachable. Failures are JSON objects with \
                 code, message and hint.",
                self.root.path().display()
            ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(Self::tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let input = Value::Object(request.arguments.unwrap_or_default());
        let result = match tools::find(&name) {
            None => Err(Error::invalid_input(format!("there is no tool `{name}`"))
                .hint("Use one of the tools tools/list names.")),
            Some(_) => self.call(name, input).await,
        };
        Ok(match result {
            Ok(output) => CallToolResult::structured(output),
            Err(error) => CallToolResult::structured_error(error.to_json()),
        }
        .into())
    }
}

/// Serves `server` on stdin/stdout until the client goes away, on a runtime
/// of its own (for callers that are not async, like the CLI).
pub fn run_stdio(server: CorralServer) -> Result<(), Error> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            Error::new(
                ErrorCode::Io,
                format!("could not start the MCP server: {e}"),
            )
        })?;
    runtime.block_on(serve_stdio(server))
}

/// Serves `server` on stdin/stdout until the client goes away.
pub async fn serve_stdio(server: CorralServer) -> Result<(), Error> {
    let io_error =
        |e: &dyn std::fmt::Display| Error::new(ErrorCode::Io, format!("MCP over stdio: {e}"));
    let running = server
        .serve(rmcp::transport::io::stdio())
        .await
        .map_err(|e| io_error(&e))?;
    running.waiting().await.map_err(|e| io_error(&e))?;
    Ok(())
}
