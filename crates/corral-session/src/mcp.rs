//! The user's MCP servers, as a client (rmcp): when a project opens, each
//! starts in it under the same fence as a command (corral-tools'
//! `server_command`: the build profile, the network only when its settings
//! say so, an environment built from nothing plus its own variables), and
//! its tools join the model's as `SERVER__TOOL`. A server that cannot
//! start, crashes or breaks the protocol is shown failed, with its stderr,
//! until Restart; the other servers and the app go on. A call waits at most
//! its server's timeout. The servers stop when the project closes.
//!
//! The protocol is MCP 2026-07-28 where the server speaks it: the session
//! begins with `server/discover` (no `initialize`, each request carrying
//! its own version and capabilities); a server that does not know
//! `server/discover` gets the `initialize` handshake of 2025-11-25 (or the
//! older version it answers with). A line from a server's stdout is read
//! only up to [`MAX_MESSAGE`]: a longer one, or one that never ends, ends
//! its session and shows it failed, saying why.

use crate::server_tool::{ServerTool, SEPARATOR};
use corral_tools::shell::{CancelToken, ServerCommand, ServerFolder};
use corral_tools::spec::ToolSpec;
use corral_tools::{Error, ErrorCode, ProjectRoot};
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RunningService};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClientTransport, StreamableHttpClientTransportConfig,
};
use rmcp::RoleClient;
use serde::Deserialize;
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, ReadBuf};

/// How long a call may take unless the server's settings say otherwise.
pub const DEFAULT_TIMEOUT_SECS: u64 = 120;

/// One MCP server the user added (Settings).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct McpServerConfig {
    /// Letters, digits, `-` and `_`; its tools reach the model as
    /// `NAME__TOOL`.
    pub name: String,
    /// The program: a name looked up in the system folders, or an absolute
    /// path outside the project (empty for a server at a URL).
    #[serde(default)]
    pub command: String,
    /// A server reached over streamable HTTP instead of a program
    /// (`http://` or `https://`); a variable named `BEARER_TOKEN` is sent
    /// as `Authorization: Bearer <value>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub url: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    /// The names of the environment variables it gets; their values are
    /// secrets (see [`McpSettings::secrets`]).
    #[serde(default)]
    pub env: Vec<String>,
    /// Runs with the network (a server for an online service needs it).
    #[serde(default)]
    pub network: bool,
    /// Starts in the project folder instead of a private one. The
    /// project's files can then choose what a launcher runs (`npx` prefers
    /// the project's `node_modules`), so only for servers that need it.
    #[serde(default)]
    pub in_project: bool,
    /// Its calls run without asking.
    #[serde(default)]
    pub trusted: bool,
    /// Tools that only read: they run without asking.
    #[serde(default)]
    pub read_only_tools: Vec<String>,
    /// How long one call may take (default 120 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub timeout_secs: Option<u64>,
}

/// The stderr kept of each server (its newest bytes).
const STDERR_KEEP: usize = 16 * 1024;
/// The most text of one result passed on to the model.
const RESULT_KEEP: usize = 100 * 1024;
/// The variable whose value a server at a URL gets as its bearer token.
pub const BEARER_TOKEN: &str = "BEARER_TOKEN";
/// The longest line (one message) read from a server's stdout; a longer
/// one ends the server's session, which is then shown failed.
pub const MAX_MESSAGE: usize = 64 * 1024 * 1024;
/// The most content blocks of one result passed on.
const MAX_BLOCKS: usize = 256;
/// The longest tool description passed on (it goes with every request).
const MAX_DESCRIPTION: usize = 4 * 1024;
/// The largest input schema a tool may have.
const MAX_SCHEMA: usize = 64 * 1024;
/// How long a server may take to start and list its tools.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// Where a server stands (Settings shows it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum McpState {
    Starting,
    Running,
    Failed,
    Stopped,
}

/// One server as Settings shows it.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct McpServerStatus {
    pub name: String,
    pub state: McpState,
    /// Its tools by their own names on the server (the model calls them
    /// `SERVER__TOOL`; "read-only tools" takes these names).
    pub tools: Vec<String>,
    /// Why it failed, or the tools it offered that were left out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
    /// The newest 16 KiB of what it wrote to stderr.
    pub stderr: String,
}

struct Live {
    client: RunningService<RoleClient, ()>,
    /// Its process group, killed when the session is dropped (none for a URL).
    _group: Option<Group>,
    tools: Vec<ServerTool>,
    /// Its private folder, removed when it stops (none for a URL).
    _folder: Option<ServerFolder>,
}

/// A server's process group, killed when this is dropped: when its session
/// ends, and also when a start is abandoned half way (a timeout drops the
/// start, and with it this). Once the leader was reaped its number may be
/// another group's, so it is then left alone.
struct Group {
    pgid: rustix::process::Pid,
    reaped: Arc<std::sync::atomic::AtomicBool>,
}

impl Drop for Group {
    fn drop(&mut self) {
        if !self.reaped.load(std::sync::atomic::Ordering::SeqCst) {
            let _ = rustix::process::kill_process_group(self.pgid, rustix::process::Signal::KILL);
        }
    }
}

struct Server {
    config: McpServerConfig,
    vars: Vec<(String, String)>,
    state: Mutex<(McpState, Vec<String>)>,
    stderr: Arc<Mutex<Vec<u8>>>,
    /// Why its stdout was cut off (a line over [`MAX_MESSAGE`]), once it was.
    broken: Arc<Mutex<Option<String>>>,
    live: tokio::sync::Mutex<Option<Live>>,
}

/// The servers of one open project.
pub struct McpHub {
    root: Arc<ProjectRoot>,
    servers: BTreeMap<String, Arc<Server>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn mcp_error(server: &str, message: impl Into<String>) -> Error {
    Error::new(ErrorCode::McpServer, message.into()).detail("server", server)
}

impl McpHub {
    /// The hub for `root` with these servers (each with its variables'
    /// values); none started yet.
    pub fn new(
        root: Arc<ProjectRoot>,
        servers: Vec<(McpServerConfig, Vec<(String, String)>)>,
    ) -> Self {
        let servers = servers
            .into_iter()
            .map(|(config, vars)| {
                let server = Server {
                    config,
                    vars,
                    state: Mutex::new((McpState::Stopped, Vec::new())),
                    stderr: Arc::default(),
                    broken: Arc::default(),
                    live: tokio::sync::Mutex::new(None),
                };
                (server.config.name.clone(), Arc::new(server))
            })
            .collect();
        McpHub { root, servers }
    }

    /// Starts every server, side by side; one failing does not stop the others.
    pub async fn start_all(&self) {
        let mut starts = tokio::task::JoinSet::new();
        for server in self.servers.values() {
            let (server, root) = (server.clone(), self.root.clone());
            starts.spawn(async move { server.start(&root).await });
        }
        while starts.join_next().await.is_some() {}
    }

    /// Stops `name` if it runs, and starts it again.
    pub async fn restart(&self, name: &str) -> Result<(), Error> {
        let server = self.server(name)?;
        server.stop().await;
        server.start(&self.root).await;
        Ok(())
    }

    /// Stops every server.
    pub async fn stop_all(&self) {
        for server in self.servers.values() {
            server.stop().await;
        }
    }

    /// Every server's state, tools and stderr.
    pub fn status(&self) -> Vec<McpServerStatus> {
        self.servers.values().map(|s| s.status()).collect()
    }

    /// The protocol version `name`'s session runs on, while it runs
    /// (`2026-07-28` after `server/discover`, else what `initialize`
    /// agreed on).
    pub async fn protocol_version(&self, name: &str) -> Option<String> {
        let server = self.servers.get(name)?;
        let live = server.live.lock().await;
        let info = live.as_ref()?.client.peer().peer_info()?;
        Some(info.protocol_version.to_string())
    }

    fn server(&self, name: &str) -> Result<&Arc<Server>, Error> {
        self.servers.get(name).ok_or_else(|| {
            Error::new(
                ErrorCode::NotFound,
                format!("there is no MCP server `{name}`"),
            )
        })
    }

    /// The tools of the running servers, as the model sees them.
    pub fn specs(&self) -> Vec<ToolSpec> {
        let mut specs = Vec::new();
        for server in self.servers.values() {
            let Ok(live) = server.live.try_lock() else {
                continue;
            };
            specs.extend(live.iter().flat_map(|l| &l.tools).map(ServerTool::spec));
        }
        specs
    }

    /// The tool the model calls `name` (`SERVER__TOOL`), if it names one of
    /// these servers: the tool, or why that server cannot take it (it is
    /// not running, or has no such tool).
    pub fn tool(&self, name: &str) -> Option<Result<ServerTool, Error>> {
        let (server, tool) = name.split_once(SEPARATOR)?;
        let server = self.servers.get(server)?;
        let Ok(live) = server.live.try_lock() else {
            // A start or a stop holds it: the call would wait for neither.
            return Some(Err(server.not_running()));
        };
        let Some(live) = live.as_ref() else {
            return Some(Err(server.not_running()));
        };
        Some(
            live.tools
                .iter()
                .find(|t| t.tool == tool)
                .cloned()
                .ok_or_else(|| server.no_tool(tool)),
        )
    }

    /// Calls `tool` of `server` with `input` (an object), waiting at most
    /// the server's timeout or until `cancel`. The result: `{content,
    /// structured_content?, is_error}` with the text content cut at 100 KiB.
    pub async fn call(
        &self,
        server: &str,
        tool: &str,
        input: Value,
        cancel: &CancelToken,
    ) -> Result<Value, Error> {
        let server = self.server(server)?;
        tokio::select! {
            result = server.call(tool, input) => result,
            () = cancelled(cancel) => Err(Error::new(
                ErrorCode::Cancelled,
                format!("`{tool}` of the MCP server `{}` was stopped by the user", server.config.name),
            )
            .detail("tool", tool)),
        }
    }
}

impl Server {
    /// Why this server takes no calls now.
    fn not_running(&self) -> Error {
        let name = &self.config.name;
        let (state, problems) = lock(&self.state).clone();
        let why = match state {
            McpState::Failed => format!("it failed: {}", problems.join("; ")),
            _ => "it is not running".to_string(),
        };
        mcp_error(
            name,
            format!("the MCP server `{name}` cannot take calls: {why}"),
        )
        .hint("Restart it in Settings, or do without its tools.")
    }

    fn no_tool(&self, tool: &str) -> Error {
        let name = &self.config.name;
        Error::new(
            ErrorCode::NotFound,
            format!("the MCP server `{name}` has no tool `{tool}`"),
        )
        .hint(format!("Call one of the tools `{name}` offers."))
        .detail("server", name.as_str())
    }

    fn set_state(&self, state: McpState, problems: Vec<String>) {
        *lock(&self.state) = (state, problems);
    }

    fn status(&self) -> McpServerStatus {
        let (state, problems) = lock(&self.state).clone();
        let tools = self
            .live
            .try_lock()
            .ok()
            .and_then(|live| {
                live.as_ref()
                    .map(|l| l.tools.iter().map(|t| t.tool.clone()).collect())
            })
            .unwrap_or_default();
        let stderr = String::from_utf8_lossy(&lock(&self.stderr)).into_owned();
        McpServerStatus {
            name: self.config.name.clone(),
            state,
            tools,
            problems,
            stderr,
        }
    }

    async fn start(&self, root: &ProjectRoot) {
        let mut live = self.live.lock().await;
        if live.is_some() {
            return;
        }
        self.set_state(McpState::Starting, Vec::new());
        lock(&self.stderr).clear();
        *lock(&self.broken) = None;
        match tokio::time::timeout(START_TIMEOUT, self.launch(root)).await {
            Ok(Ok((started, skipped))) => {
                *live = Some(started);
                self.set_state(McpState::Running, skipped);
            }
            Ok(Err(e)) => {
                let why = match lock(&self.broken).clone() {
                    Some(broken) => format!("{} ({broken})", e.message),
                    None => e.message,
                };
                self.set_state(McpState::Failed, vec![why]);
            }
            Err(_) => self.set_state(
                McpState::Failed,
                vec![format!(
                    "it did not answer within {} s of starting",
                    START_TIMEOUT.as_secs()
                )],
            ),
        }
    }

    /// Spawns the server (or connects to its URL), initializes the session
    /// and lists its tools; returns them with the tools left out and why.
    async fn launch(&self, root: &ProjectRoot) -> Result<(Live, Vec<String>), Error> {
        let (client, group, folder) = match &self.config.url {
            Some(url) => (self.connect(url).await?, None, None),
            None => {
                let (client, group, folder) = self.spawn(root).await?;
                (client, group, Some(folder))
            }
        };
        let name = &self.config.name;
        let listed = client
            .list_all_tools()
            .await
            .map_err(|e| mcp_error(name, format!("it did not list its tools: {e}")))?;
        let mut tools: Vec<ServerTool> = Vec::new();
        let mut skipped = Vec::new();
        for tool in listed {
            let schema = Value::Object((*tool.input_schema).clone());
            let full = format!("{name}{SEPARATOR}{}", tool.name);
            if tools.iter().any(|t| t.tool == tool.name) {
                skipped.push(format!(
                    "tool `{}` left out: offered twice (providers refuse two tools of one name)",
                    tool.name
                ));
            } else if schema.to_string().len() > MAX_SCHEMA {
                skipped.push(format!(
                    "tool `{}` left out: its input schema is over {} KiB (it would go with every request)",
                    tool.name,
                    MAX_SCHEMA / 1024
                ));
            } else if schema.get("type").and_then(Value::as_str) != Some("object") {
                skipped.push(format!(
                    "tool `{}` left out: its input schema is not an object",
                    tool.name
                ));
            } else if !valid_tool_name(&full) {
                skipped.push(format!(
                    "tool `{}` left out: `{full}` is not a name models accept (letters, digits, `_`, `-`, at most 64)",
                    tool.name
                ));
            } else {
                let description = tool.description.as_deref().unwrap_or("");
                // A server at a URL works on no file of the project.
                let local = self.config.url.is_none();
                let mut found = ServerTool::new(
                    name,
                    &tool.name,
                    cut(description, MAX_DESCRIPTION),
                    schema,
                    local,
                );
                found.read_only = self.config.read_only_tools.iter().any(|t| *t == tool.name);
                found.trusted = self.config.trusted;
                tools.push(found);
            }
        }
        Ok((
            Live {
                client,
                _group: group,
                tools,
                _folder: folder,
            },
            skipped,
        ))
    }

    /// Starts the program in the project under the sandbox and begins the
    /// session over its stdin and stdout.
    async fn spawn(
        &self,
        root: &ProjectRoot,
    ) -> Result<(RunningService<RoleClient, ()>, Option<Group>, ServerFolder), Error> {
        let name = &self.config.name;
        let ServerCommand { command, folder } = corral_tools::shell::server_command(
            root,
            &self.config.command,
            &self.config.args,
            &self.vars,
            self.config.network,
            self.config.in_project,
        )?;
        let mut tokio_command = tokio::process::Command::from(command);
        tokio_command.kill_on_drop(true);
        let mut child = tokio_command.spawn().map_err(|e| {
            mcp_error(
                name,
                format!("`{}` could not be started: {e}", self.config.command),
            )
        })?;
        let reaped = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let group = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .and_then(rustix::process::Pid::from_raw)
            .map(|pgid| Group {
                pgid,
                reaped: reaped.clone(),
            });
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(mcp_error(name, "its pipes could not be opened"));
        };
        let kept = self.stderr.clone();
        tokio::spawn(async move {
            let mut stderr = stderr;
            let mut buf = vec![0u8; 8192];
            while let Ok(n) = stderr.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                let mut kept = lock(&kept);
                kept.extend_from_slice(&buf[..n]);
                let over = kept.len().saturating_sub(STDERR_KEEP);
                kept.drain(..over);
            }
        });
        // The child is reaped (and killed, if it still runs) when the
        // session ends.
        tokio::spawn(async move {
            let _ = child.wait().await;
            reaped.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        let stdout = BoundedLines::new(stdout, MAX_MESSAGE, self.broken.clone());
        // The line with its `\r\n` fits: the bound above is the one met.
        let transport = AsyncRwTransport::new(stdout, stdin).with_max_line_length(MAX_MESSAGE + 2);
        // On an error `group` is dropped, and the process group with it.
        let client = ()
            .serve_with_lifecycle(transport, lifecycle())
            .await
            .map_err(|e| mcp_error(name, format!("it did not start an MCP session: {e}")))?;
        Ok((client, group, folder))
    }

    /// Begins the session with a server at `url` (streamable HTTP), with
    /// its bearer token when it has one. Redirects are not followed.
    async fn connect(&self, url: &str) -> Result<RunningService<RoleClient, ()>, Error> {
        let name = &self.config.name;
        // The process-wide TLS provider, as the rest of the app's HTTP uses
        // (installing it twice is harmless).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest_mcp::Client::builder()
            .redirect(reqwest_mcp::redirect::Policy::none())
            .build()
            .map_err(|e| mcp_error(name, format!("no HTTP client could be made: {e}")))?;
        let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
        if let Some((_, token)) = self.vars.iter().find(|(var, _)| var == BEARER_TOKEN) {
            config = config.auth_header(token.clone());
        }
        let transport = StreamableHttpClientTransport::with_client(http, config);
        ().serve_with_lifecycle(transport, lifecycle())
            .await
            .map_err(|e| {
                mcp_error(
                    name,
                    format!("it did not start an MCP session at {url}: {e}"),
                )
            })
    }

    async fn stop(&self) {
        let taken = self.live.lock().await.take();
        if let Some(mut live) = taken {
            let _ = tokio::time::timeout(Duration::from_secs(2), live.client.close()).await;
            // Dropped here: its process group is killed.
        }
        if lock(&self.state).0 != McpState::Failed {
            self.set_state(McpState::Stopped, Vec::new());
        }
    }

    async fn call(&self, tool: &str, input: Value) -> Result<Value, Error> {
        let name = &self.config.name;
        let Value::Object(arguments) = input else {
            return Err(Error::invalid_input(
                "the input of an MCP tool is an object",
            ));
        };
        let peer = {
            let live = self.live.lock().await;
            let Some(live) = live.as_ref() else {
                return Err(self.not_running());
            };
            if !live.tools.iter().any(|t| t.tool == tool) {
                return Err(self.no_tool(tool));
            }
            live.client.peer().clone()
        };
        let timeout = Duration::from_secs(self.config.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS));
        let request = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        match tokio::time::timeout(timeout, peer.call_tool(request)).await {
            Ok(Ok(result)) => Ok(result_for_model(
                serde_json::to_value(&result).unwrap_or(Value::Null),
            )),
            Ok(Err(rmcp::service::ServiceError::McpError(e))) => Err(mcp_error(
                name,
                format!("the MCP server `{name}` refused the call: {}", e.message),
            )
            .detail("tool", tool)),
            Ok(Err(e)) => {
                // The session is over: the server exited or broke the protocol.
                let broken = lock(&self.broken).clone();
                let (why, cause) = match broken {
                    Some(broken) => (broken.clone(), broken),
                    None => (format!("it stopped during a call ({e})"), e.to_string()),
                };
                self.fail(why).await;
                Err(mcp_error(
                    name,
                    format!(
                        "the MCP server `{name}` stopped during the call ({cause}); its stderr: {}",
                        self.stderr_tail()
                    ),
                )
                .detail("tool", tool)
                .hint("Restart it in Settings."))
            }
            Err(_) => Err(mcp_error(
                name,
                format!(
                    "`{tool}` of the MCP server `{name}` did not answer within {} s",
                    timeout.as_secs()
                ),
            )
            .detail("tool", tool)
            .hint("Try again, or raise the server's timeout in Settings.")),
        }
    }

    /// Ends a session that broke and shows the server failed.
    async fn fail(&self, why: String) {
        // Dropped at once: its process group is killed.
        drop(self.live.lock().await.take());
        self.set_state(McpState::Failed, vec![why]);
    }

    fn stderr_tail(&self) -> String {
        let kept = lock(&self.stderr);
        let text = String::from_utf8_lossy(&kept);
        let tail: String = text
            .chars()
            .rev()
            .take(2000)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        if tail.trim().is_empty() {
            "(nothing)".into()
        } else {
            tail.trim().to_string()
        }
    }
}

/// How a session begins: `server/discover` at 2026-07-28, and the
/// `initialize` handshake at 2025-11-25 for a server that does not know
/// it (it answers with an error, or with no 2026-07-28 among its
/// versions). A server that never answers the probe at all gets the
/// handshake after rmcp's wait of 10 s.
fn lifecycle() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
    }
}

/// A server's stdout as the session reads it, each line bounded before it
/// is kept: once the bytes since the last line feed pass `max`, the read
/// fails (and every read after it), so the session ends at once instead
/// of holding an endless line, and `broken` says why.
struct BoundedLines<R> {
    inner: R,
    max: usize,
    /// Bytes read since the last line feed.
    line: usize,
    over: bool,
    broken: Arc<Mutex<Option<String>>>,
}

impl<R> BoundedLines<R> {
    fn new(inner: R, max: usize, broken: Arc<Mutex<Option<String>>>) -> Self {
        BoundedLines {
            inner,
            max,
            line: 0,
            over: false,
            broken,
        }
    }

    fn too_long(&self) -> std::io::Error {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "it broke the protocol: it sent a line (one message) over {} MiB",
                self.max / (1024 * 1024)
            ),
        )
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for BoundedLines<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.over {
            return Poll::Ready(Err(self.too_long()));
        }
        let before = buf.filled().len();
        match Pin::new(&mut self.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {}
            other => return other,
        }
        let mut parts = buf.filled()[before..].split(|b| *b == b'\n');
        let first = parts.next().map_or(0, <[u8]>::len);
        let mut current = self.line.saturating_add(first);
        let mut longest = current;
        for part in parts {
            current = part.len();
            longest = longest.max(current);
        }
        if longest > self.max {
            // Nothing of the failed read is handed on.
            buf.set_filled(before);
            self.over = true;
            let error = self.too_long();
            *lock(&self.broken) = Some(error.to_string());
            return Poll::Ready(Err(error));
        }
        self.line = current;
        Poll::Ready(Ok(()))
    }
}

/// A tool name the providers accept (`^[a-zA-Z0-9_-]{1,64}$`).
fn valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// The result as the model gets it: the content blocks (text cut at 100
/// KiB in all, other kinds named), the structured content when small, and
/// whether the tool said it failed.
fn result_for_model(result: Value) -> Value {
    let mut left = RESULT_KEEP;
    let mut content = Vec::new();
    let blocks = result
        .get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for (at, block) in blocks.iter().enumerate() {
        if left == 0 || content.len() == MAX_BLOCKS {
            content.push(json!({
                "type": "text",
                "text": format!("[{} more content blocks left out]", blocks.len() - at),
            }));
            break;
        }
        match block.get("text").and_then(Value::as_str) {
            Some(text) if text.len() <= left => {
                left -= text.len();
                content.push(json!({"type": "text", "text": text}));
            }
            Some(text) => {
                let mut cut = left;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                content.push(json!({
                    "type": "text",
                    "text": format!("{}\n[cut: {} more bytes]", &text[..cut], text.len() - cut),
                }));
                left = 0;
            }
            None => {
                let kind = block
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or("content");
                let note = format!("[{} left out]", cut(kind, 40));
                left = left.saturating_sub(note.len());
                content.push(json!({"type": "text", "text": note}));
            }
        }
    }
    let mut out = Map::new();
    out.insert("content".into(), Value::Array(content));
    if let Some(structured) = result.get("structuredContent").filter(|v| !v.is_null()) {
        if structured.to_string().len() <= RESULT_KEEP {
            out.insert("structured_content".into(), structured.clone());
        }
    }
    out.insert(
        "is_error".into(),
        Value::Bool(
            result
                .get("isError")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        ),
    );
    Value::Object(out)
}

/// Resolves once `cancel` is set (looked at every 25 ms).
async fn cancelled(cancel: &CancelToken) {
    while !cancel.is_cancelled() {
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// `text` cut at `max` bytes (on a character boundary), saying so.
fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut at = max;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    format!("{}… [cut]", &text[..at])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_is_cut_at_its_size_and_its_number_of_blocks() {
        let big = "x".repeat(RESULT_KEEP + 10);
        let many: Vec<Value> = (0..100_000)
            .map(|_| json!({"type": "image", "data": "", "mimeType": "image/png"}))
            .collect();
        let mut blocks = vec![json!({"type": "text", "text": big})];
        blocks.extend(many);
        let out = result_for_model(json!({"content": blocks, "isError": true}));
        let content = out["content"].as_array().unwrap();
        assert_eq!(content.len(), 2, "{:?}", &content[..3.min(content.len())]);
        assert!(content[0]["text"]
            .as_str()
            .unwrap()
            .ends_with("[cut: 10 more bytes]"));
        assert_eq!(content[1]["text"], "[100000 more content blocks left out]");
        assert_eq!(out["is_error"], true);

        let images: Vec<Value> = (0..1000).map(|_| json!({"type": "image"})).collect();
        let out = result_for_model(json!({"content": images}));
        let content = out["content"].as_array().unwrap();
        assert_eq!(content.len(), MAX_BLOCKS + 1);
        assert_eq!(content[0]["text"], "[image left out]");
        assert_eq!(
            content[MAX_BLOCKS]["text"],
            "[744 more content blocks left out]"
        );
    }

    /// Reads `chunks` (one read each) through a [`BoundedLines`] of `max`
    /// to the end or its error; returns what came through and what it
    /// said was wrong.
    fn read_bounded(chunks: &[&[u8]], max: usize) -> (Vec<u8>, Option<String>) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let mut parts: Box<dyn AsyncRead + Unpin> = Box::new(&[][..]);
        for chunk in chunks {
            parts = Box::new(parts.chain(std::io::Cursor::new(chunk.to_vec())));
        }
        let broken = Arc::default();
        let mut reader = BoundedLines::new(parts, max, Arc::clone(&broken));
        let mut out = Vec::new();
        let result = runtime.block_on(reader.read_to_end(&mut out));
        let said = lock(&broken).clone();
        assert_eq!(result.is_err(), said.is_some());
        (out, said)
    }

    #[test]
    fn a_line_is_bounded_across_reads_and_a_line_feed_starts_anew() {
        // Lines of the bound exactly, split across reads, go through.
        let (out, said) = read_bounded(&[b"abcd", b"ef\nab", b"cdef\n", b"xy"], 6);
        assert_eq!(out, b"abcdef\nabcdef\nxy");
        assert_eq!(said, None);
        // One byte more, reached across reads, fails there.
        let (out, said) = read_bounded(&[b"abc\nabcd", b"efg", b"\n"], 6);
        assert_eq!(out, b"abc\nabcd");
        assert!(said.unwrap().contains("over"));
        // A long line in the middle of one read fails too.
        let (_, said) = read_bounded(&[b"a\nabcdefgh\nb\n"], 6);
        assert!(said.is_some());
    }

    #[test]
    fn descriptions_are_cut_on_a_character() {
        assert_eq!(cut("short", 10), "short");
        assert_eq!(cut("ééé", 3), "é… [cut]");
    }
}
