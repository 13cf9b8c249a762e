//! A user's MCP server that answers with a line that never ends (the
//! fixture's `flood`, megabytes without a line feed until it is stopped):
//! the client reads no more of it than one message may be, the server is
//! shown failed saying so, its process group is stopped, and the process
//! and the other servers go on.

use corral_session::mcp::{McpHub, McpServerConfig, McpState, MAX_MESSAGE};
use corral_tools::shell::CancelToken;
use corral_tools::{ErrorCode, ProjectRoot};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;

fn server(name: &str, script: &Path) -> McpServerConfig {
    McpServerConfig {
        name: name.into(),
        command: "/usr/bin/python3".into(),
        url: None,
        args: vec![script.display().to_string()],
        env: Vec::new(),
        network: false,
        in_project: false,
        trusted: false,
        read_only_tools: Vec::new(),
        timeout_secs: Some(600),
    }
}

#[test]
fn a_line_without_end_fails_its_server_and_nothing_else() {
    let tmp = tempfile::tempdir().unwrap();
    let app = tmp.path().join("app");
    std::fs::create_dir_all(app.join(".fixture")).unwrap();
    // The sandbox shows a server a `/tmp` of its own: the script is
    // copied into the project.
    let script = app.join(".fixture/mcp_server.py");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../corral-testkit/fixtures/mcp_server.py"),
        &script,
    )
    .unwrap();
    let root = Arc::new(ProjectRoot::open(&app).unwrap());
    let hub = McpHub::new(
        root,
        vec![
            (server("flooding", &script), Vec::new()),
            (server("calm", &script), Vec::new()),
        ],
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        hub.start_all().await;
        let status = hub.status();
        assert!(
            status.iter().all(|s| s.state == McpState::Running),
            "{status:?}"
        );
        // The fixture knows no `server/discover`: `initialize` it is.
        assert_eq!(
            hub.protocol_version("flooding").await.as_deref(),
            Some("2025-11-25")
        );

        // The call ends as soon as the line passes the bound, well within
        // the server's timeout of ten minutes.
        let error = hub
            .call("flooding", "flood", json!({}), &CancelToken::default())
            .await
            .unwrap_err();
        assert_eq!(error.code, ErrorCode::McpServer, "{error:?}");
        let limit = format!("over {} MiB", MAX_MESSAGE / (1024 * 1024));
        assert!(error.message.contains(&limit), "{}", error.message);

        let status = hub.status();
        let flooding = status.iter().find(|s| s.name == "flooding").unwrap();
        assert_eq!(flooding.state, McpState::Failed);
        assert!(
            flooding.problems.iter().any(|p| p.contains(&limit)),
            "{:?}",
            flooding.problems
        );
        assert_eq!(hub.protocol_version("flooding").await, None);
        let again = hub
            .call(
                "flooding",
                "echo",
                json!({"text": "hi"}),
                &CancelToken::default(),
            )
            .await
            .unwrap_err();
        assert!(
            again.message.contains("cannot take calls"),
            "{}",
            again.message
        );

        // The other server goes on.
        let echoed = hub
            .call(
                "calm",
                "echo",
                json!({"text": "still here"}),
                &CancelToken::default(),
            )
            .await
            .unwrap();
        assert_eq!(echoed["content"][0]["text"], "echo: still here");
        hub.stop_all().await;
    });
}
