//! The fixture MCP servers: Python scripts of the standard library (so
//! they run with the system's python3 inside the sandbox) that misbehave
//! on request. The e2e suite starts the stdio one too.

use corral_session::mcp::McpServerConfig;
use std::path::{Path, PathBuf};

/// The Python the fixture servers run with.
pub const PYTHON: &str = "/usr/bin/python3";

/// The stdio server (`echo`, `write`, `read`, `spill`, `crash`, `hang`,
/// `big`, `garble`, `flood`, `cwd`, `env`).
pub fn stdio_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/mcp_server.py")
}

/// The server over streamable HTTP, behind a bearer token.
pub fn http_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/mcp_http_server.py")
}

/// Copies the stdio server into `project` (`.fixture/mcp_server.py`): the
/// sandbox shows a server a `/tmp` of its own, so a checkout under `/tmp`
/// would be out of its sight. Returns the copy's path.
pub fn stdio_script_in(project: &Path) -> PathBuf {
    let script = project.join(".fixture/mcp_server.py");
    std::fs::create_dir_all(project.join(".fixture")).unwrap();
    std::fs::copy(stdio_script(), &script).unwrap();
    script
}

/// A server `name` running `script` with `args` after it: untrusted, no
/// network, in a folder of its own, no tool marked read-only, 5 s timeout.
pub fn stdio_server(name: &str, script: &Path, args: &[&str]) -> McpServerConfig {
    let mut all = vec![script.display().to_string()];
    all.extend(args.iter().map(|a| a.to_string()));
    McpServerConfig {
        name: name.into(),
        command: PYTHON.into(),
        url: None,
        args: all,
        env: Vec::new(),
        network: false,
        in_project: false,
        trusted: false,
        read_only_tools: Vec::new(),
        timeout_secs: Some(5),
    }
}

/// The text of a server tool's first content block.
pub fn text_of(result: &serde_json::Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}
