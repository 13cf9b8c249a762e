//! A key goes only to the origin it was saved for: the app's requests to a
//! scripted OpenAI-compatible server on loopback, and a conversation's
//! chosen model with only its own origin's key.

use crate::window::app;
use serde_json::{json, Value};

/// A one-shot OpenAI-compatible server on 127.0.0.1: answers each request
/// with a short stream and hands back the request's head (lowercased) and
/// body. The app's question whether it is Ollama (`GET /api/version`) gets
/// a 404, as llama.cpp gives, and is not counted.
fn scripted_server(requests: usize) -> (String, std::thread::JoinHandle<Vec<String>>) {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
    let server = std::thread::spawn(move || {
        let mut heads = Vec::new();
        while heads.len() < requests {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut head = String::new();
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if line == "\r\n" || line.is_empty() {
                    break;
                }
                head.push_str(&line.to_ascii_lowercase());
            }
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map(|n| n.trim().parse().unwrap())
                .unwrap_or(0);
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let mut stream = stream;
            if head.starts_with("get /api/version ") {
                write!(
                    stream,
                    "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                )
                .unwrap();
                continue;
            }
            let chunk = r#"{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}"#;
            let events = format!("data: {chunk}\n\ndata: [DONE]\n\n");
            write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{events}",
                events.len()
            )
            .unwrap();
            heads.push(format!("{head}\r\n{}", String::from_utf8_lossy(&body)));
        }
        heads
    });
    (base_url, server)
}

#[test]
fn a_key_is_only_sent_to_the_origin_it_was_saved_for() {
    let app = app();
    let (local, server) = scripted_server(2);
    let settings = |base_url: &str, api_key: Option<&str>| {
        let mut settings = json!({"provider": "openai", "base_url": base_url, "model": "m",
                                  "max_tokens": 100, "mode": "ask"});
        if let Some(key) = api_key {
            settings["api_key"] = json!(key);
        }
        app.invoke("save_settings", json!({"settings": settings}))
            .unwrap()
    };
    let stream = |run_id: &str, channel: u32| {
        app.invoke(
            "llm_stream",
            json!({"run_id": run_id, "on_event": format!("__CHANNEL__:{channel}"),
                   "request": {"system": "", "messages": [{"role": "user",
                   "content": [{"type": "text", "text": "hello"}]}], "tools": []}}),
        )
        .unwrap();
        let events = app.received(channel);
        assert_eq!(events.last().unwrap()["type"], "done", "{events:?}");
    };

    let saved = settings("https://api.openai.com/v1", Some("sk-user-openai"));
    assert_eq!(saved["has_api_key"], true);
    // Pointed at a local server (as when one is detected), the OpenAI key
    // is neither shown as set nor sent.
    assert_eq!(settings(&local, None)["has_api_key"], false);
    stream("r1", 30);
    // A key saved for the local server is its own.
    assert_eq!(settings(&local, Some("local-key"))["has_api_key"], true);
    stream("r2", 31);
    let heads = server.join().unwrap();
    assert!(!heads[0].contains("authorization"), "{}", heads[0]);
    assert!(!heads[0].contains("sk-user-openai"), "{}", heads[0]);
    assert!(
        heads[1].contains("authorization: bearer local-key"),
        "{}",
        heads[1]
    );
    // Back on OpenAI, its own key is there again.
    assert_eq!(
        settings("https://api.openai.com/v1/", None)["has_api_key"],
        true
    );
    let got = app.invoke("get_settings", json!({})).unwrap();
    assert_eq!(got["has_api_key"], true);
    assert!(!got.to_string().contains("sk-user-openai"), "{got}");
}

#[test]
fn a_conversations_target_gets_its_model_and_only_its_origins_key() {
    let app = app();
    let (local, server) = scripted_server(2);
    let saved = json!({"provider": "openai", "base_url": "https://api.openai.com/v1", "model": "gpt-default",
                       "max_tokens": 100, "mode": "ask", "api_key": "sk-user-openai"});
    app.invoke("save_settings", json!({"settings": saved}))
        .unwrap();
    let stream = |run_id: &str, channel: u32, target: Value| {
        app.invoke(
            "llm_stream",
            json!({"run_id": run_id, "on_event": format!("__CHANNEL__:{channel}"), "target": target,
                   "request": {"system": "", "messages": [{"role": "user",
                   "content": [{"type": "text", "text": "hello"}]}], "tools": []}}),
        )
        .unwrap();
        let events = app.received(channel);
        assert_eq!(events.last().unwrap()["type"], "done", "{events:?}");
    };
    // The model switcher's pick: a local server the OpenAI key was not saved for.
    stream(
        "t1",
        40,
        json!({"provider": "openai", "base_url": local, "model": "qwen3:8b"}),
    );
    // Its own key, once saved for it, goes along.
    let store = &app.state().store;
    store
        .set_api_key(corral_llm::Provider::OpenAi, &local, "local-key")
        .unwrap();
    stream(
        "t2",
        41,
        json!({"provider": "openai", "base_url": local, "model": "qwen3:8b"}),
    );
    let heads = server.join().unwrap();
    assert!(heads[0].contains(r#""model":"qwen3:8b""#), "{}", heads[0]);
    assert!(!heads[0].contains("authorization"), "{}", heads[0]);
    assert!(!heads[0].contains("sk-user-openai"), "{}", heads[0]);
    assert!(
        heads[1].contains("authorization: bearer local-key"),
        "{}",
        heads[1]
    );
    // The settings keep their model.
    let got = app.invoke("get_settings", json!({})).unwrap();
    assert_eq!(got["model"], "gpt-default");
}
