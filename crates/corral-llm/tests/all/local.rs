//! Finding local OpenAI-compatible servers.

use crate::common::{Reply, Server};
use corral_llm::{detect_local_servers, probe_server, LocalServer};
use pretty_assertions::assert_eq;
use std::time::{Duration, Instant};

#[tokio::test]
async fn a_server_listing_models_is_found() {
    let models = r#"{"object":"list","data":[{"id":"qwen3:8b","object":"model","created":1,"owned_by":"library"},{"id":"llama3.2:latest","object":"model","created":1,"owned_by":"library"}]}"#;
    let server = Server::start(vec![Reply::json(200, models)]).await;
    let found = probe_server("Ollama", &server.url("/v1/"), Duration::from_millis(300)).await;
    assert_eq!(
        found,
        Some(LocalServer {
            name: "Ollama".into(),
            base_url: server.url("/v1"),
            models: vec!["qwen3:8b".into(), "llama3.2:latest".into()],
        })
    );
    let sent = &server.received()[0];
    assert_eq!(
        (sent.method.as_str(), sent.path.as_str()),
        ("GET", "/v1/models")
    );
}

#[tokio::test]
async fn other_answers_are_not_servers() {
    let server = Server::start(vec![
        Reply::json(404, r#"{"error":"not found"}"#),
        Reply::json(200, "<html>a web app</html>"),
    ])
    .await;
    for _ in 0..2 {
        assert_eq!(
            probe_server("x", &server.url("/v1"), Duration::from_millis(300)).await,
            None
        );
    }
}

#[tokio::test]
async fn silent_and_closed_ports_are_skipped_quickly() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let started = Instant::now();
    for port in [silent, closed] {
        let url = format!("http://127.0.0.1:{port}/v1");
        assert_eq!(
            probe_server("x", &url, Duration::from_millis(200)).await,
            None
        );
    }
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn detection_probes_concurrently_and_returns_fast() {
    let started = Instant::now();
    let found = detect_local_servers().await;
    assert!(
        started.elapsed() < Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );
    assert!(found
        .iter()
        .all(|s| s.base_url.starts_with("http://127.0.0.1:")));
}

/// Answers every request on `port` with a one-model list until dropped.
async fn model_list_on(port: u16, model: &'static str) -> tokio::task::JoinHandle<()> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .unwrap_or_else(|e| panic!("port {port} must be free for this test: {e}"));
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 2048];
                let _ = socket.read(&mut buf).await;
                let body = format!(r#"{{"object":"list","data":[{{"id":"{model}"}}]}}"#);
                let reply = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(reply.as_bytes()).await;
            });
        }
    })
}

#[tokio::test]
async fn servers_on_the_usual_ports_of_jan_vllm_and_text_generation_webui_are_found() {
    let servers = [
        model_list_on(1337, "jan-model").await,
        model_list_on(8000, "vllm-model").await,
        model_list_on(5000, "webui-model").await,
    ];
    let started = Instant::now();
    let found = detect_local_servers().await;
    assert!(
        started.elapsed() < Duration::from_millis(600),
        "{:?}",
        started.elapsed()
    );
    let ours: Vec<(String, Vec<String>)> = found
        .into_iter()
        .filter(|s| {
            [1337, 8000, 5000]
                .iter()
                .any(|p| s.base_url.contains(&format!(":{p}/")))
        })
        .map(|s| (s.name, s.models))
        .collect();
    assert_eq!(
        ours,
        vec![
            ("Jan".to_string(), vec!["jan-model".to_string()]),
            ("vLLM".to_string(), vec!["vllm-model".to_string()]),
            (
                "text-generation-webui".to_string(),
                vec!["webui-model".to_string()]
            ),
        ]
    );
    for server in servers {
        server.abort();
    }
}
