//! A scripted HTTP/1.1 server on 127.0.0.1 for the provider tests.
//!
//! Each connection gets the next scripted [`Reply`]: a status, headers, and
//! a body written in the given byte pieces with a small delay between them
//! (so the client sees events split anywhere), then a clean end, a dropped
//! connection, or silence. Every request received is recorded.

use corral_llm::{stream, ChatRequest, Provider, ProviderConfig, StreamEvent};
use serde_json::{Map, Value};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

/// The API key the tests configure; it must never show up in an event.
pub const KEY: &str = "sk-test-0123456789abcdef";

/// How a reply's body ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The body is complete (last chunk / full length), then the connection closes.
    Complete,
    /// The connection is dropped before the body is complete.
    Drop,
    /// The connection stays open and silent.
    Hang,
    /// No length and no chunking: the body ends when the connection closes.
    CloseDelimited,
}

/// One scripted response.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub pieces: Vec<Vec<u8>>,
    pub delay: Duration,
    pub end: End,
}

impl Reply {
    /// A 200 event stream, written with chunked transfer encoding.
    pub fn sse(body: &str) -> Reply {
        Reply {
            status: 200,
            headers: vec![
                ("content-type".into(), "text/event-stream".into()),
                ("cache-control".into(), "no-cache".into()),
            ],
            pieces: vec![body.as_bytes().to_vec()],
            delay: Duration::from_millis(1),
            end: End::Complete,
        }
    }

    /// A 200 newline-delimited JSON stream (Ollama's), written chunked.
    pub fn ndjson(body: &str) -> Reply {
        Reply::typed(200, "application/x-ndjson", body)
    }

    /// A JSON body with this status.
    pub fn json(status: u16, body: &str) -> Reply {
        Reply::typed(status, "application/json", body)
    }

    /// A body of this content type and status.
    pub fn typed(status: u16, content_type: &str, body: &str) -> Reply {
        Reply {
            status,
            headers: vec![("content-type".into(), content_type.into())],
            ..Reply::sse(body)
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Re-splits the body into pieces of `size` bytes (cutting through
    /// UTF-8 characters, JSON strings and line ends alike).
    pub fn every(mut self, size: usize) -> Reply {
        let body = self.pieces.concat();
        self.pieces = body.chunks(size).map(<[u8]>::to_vec).collect();
        self
    }

    /// Re-splits the body at these byte offsets (in any order).
    pub fn split_at(mut self, offsets: &[usize]) -> Reply {
        let body = self.pieces.concat();
        let mut offsets = offsets.to_vec();
        offsets.sort_unstable();
        let mut pieces = Vec::new();
        let mut start = 0;
        for at in offsets {
            pieces.push(body[start..at].to_vec());
            start = at;
        }
        pieces.push(body[start..].to_vec());
        self.pieces = pieces;
        self
    }

    pub fn end(mut self, end: End) -> Reply {
        self.end = end;
        self
    }
}

/// A request as the server received it.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: String,
    pub path: String,
    /// Lowercased names.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).expect("request body is JSON")
    }
}

/// The server; it stops with the test's runtime.
pub struct Server {
    pub port: u16,
    received: Arc<Mutex<Vec<Received>>>,
}

impl Server {
    pub async fn start(replies: Vec<Reply>) -> Server {
        Server::start_on(0, replies).await
    }

    /// [`Server::start`] on this port (0 for any free one).
    pub async fn start_on(port: u16, replies: Vec<Reply>) -> Server {
        let listener = TcpListener::bind(("127.0.0.1", port)).await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let received = Arc::new(Mutex::new(Vec::new()));
        let queue = Arc::new(Mutex::new(VecDeque::from(replies)));
        let log = received.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let log = log.clone();
                let queue = queue.clone();
                tokio::spawn(async move {
                    serve(socket, log, queue).await;
                });
            }
        });
        Server { port, received }
    }

    /// `http://127.0.0.1:PORT` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub fn received(&self) -> Vec<Received> {
        self.received.lock().expect("log").clone()
    }

    /// A config for this server: the test key, fast retries, short timeouts.
    pub fn config(&self, provider: Provider) -> ProviderConfig {
        let mut config = ProviderConfig::new(provider, "test-model");
        config.base_url = match provider {
            Provider::Anthropic => self.url(""),
            Provider::OpenAi => self.url("/v1"),
            Provider::Ollama => self.url(""),
        };
        config.api_key = Some(KEY.into());
        config.max_tokens = 1024;
        config.connect_timeout = Duration::from_secs(2);
        config.read_timeout = Duration::from_secs(5);
        config.retry_base_delay = Duration::from_millis(10);
        config
    }
}

async fn serve(
    mut socket: TcpStream,
    log: Arc<Mutex<Vec<Received>>>,
    queue: Arc<Mutex<VecDeque<Reply>>>,
) {
    let Some(request) = read_request(&mut socket).await else {
        return;
    };
    log.lock().expect("log").push(request);
    let reply = queue.lock().expect("queue").pop_front();
    let reply = reply.unwrap_or_else(|| Reply::json(500, r#"{"error":"no reply scripted"}"#));
    let body_len: usize = reply.pieces.iter().map(Vec::len).sum();
    let mut head = format!("HTTP/1.1 {} {}\r\n", reply.status, reason(reply.status));
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    let chunked = reply.status == 200
        && reply
            .headers
            .iter()
            .any(|(_, v)| v == "text/event-stream" || v == "application/x-ndjson");
    match reply.end {
        End::CloseDelimited => {}
        _ if chunked => head.push_str("transfer-encoding: chunked\r\n"),
        End::Drop => head.push_str(&format!("content-length: {}\r\n", body_len + 100)),
        _ => head.push_str(&format!("content-length: {body_len}\r\n")),
    }
    head.push_str("connection: close\r\n\r\n");
    if socket.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    for piece in &reply.pieces {
        let framed = if chunked && reply.end != End::CloseDelimited {
            [format!("{:x}\r\n", piece.len()).as_bytes(), piece, b"\r\n"].concat()
        } else {
            piece.clone()
        };
        if framed.is_empty() {
            continue;
        }
        if socket.write_all(&framed).await.is_err() || socket.flush().await.is_err() {
            return;
        }
        tokio::time::sleep(reply.delay).await;
    }
    match reply.end {
        End::Complete => {
            if chunked {
                let _ = socket.write_all(b"0\r\n\r\n").await;
            }
            let _ = socket.shutdown().await;
        }
        End::CloseDelimited => {
            let _ = socket.shutdown().await;
        }
        End::Drop => drop(socket),
        End::Hang => {
            tokio::time::sleep(Duration::from_secs(30)).await;
        }
    }
}

async fn read_request(socket: &mut TcpStream) -> Option<Received> {
    let mut buf = Vec::new();
    let mut piece = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        let n = socket.read(&mut piece).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&piece[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_string();
    let path = first.next()?.to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut piece).await.ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&piece[..n]);
    }
    Some(Received {
        method,
        path,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Whatever",
    }
}

/// Runs [`stream`] to its end and returns every event, after checking the
/// contract: exactly one terminal event, last, and the key in none.
pub async fn collect(config: &ProviderConfig, request: &ChatRequest) -> Vec<StreamEvent> {
    collect_with(config, request, CancellationToken::new(), |_| {}).await
}

/// A message with the test server's address taken out: errors name a
/// server that is not the provider's own API by its address ("the server at
/// `127.0.0.1:41234`"), and the port differs on every run.
pub fn unaddressed(message: &str) -> String {
    let mut out = String::new();
    let mut rest = message;
    while let Some(at) = rest.find("server at `127.0.0.1:") {
        let (head, tail) = rest.split_at(at);
        out.push_str(head);
        out.push_str("server");
        rest = tail.find("` ").map_or("", |end| &tail[end + 1..]);
    }
    out.push_str(rest);
    out
}

/// [`collect`], calling `watch` on each event as it arrives (to cancel).
/// Error messages come back [`unaddressed`].
pub async fn collect_with(
    config: &ProviderConfig,
    request: &ChatRequest,
    cancel: CancellationToken,
    mut watch: impl FnMut(&StreamEvent) + Send,
) -> Vec<StreamEvent> {
    let mut events = Vec::new();
    let run = stream(config, request, cancel, |event| {
        watch(&event);
        events.push(event);
    });
    tokio::time::timeout(Duration::from_secs(20), run)
        .await
        .expect("the stream ended");
    let terminals = events.iter().filter(|e| e.is_terminal()).count();
    assert_eq!(terminals, 1, "exactly one terminal event: {events:#?}");
    assert!(
        events.last().is_some_and(StreamEvent::is_terminal),
        "terminal event last: {events:#?}"
    );
    let shown = serde_json::to_string(&events).expect("events serialize");
    assert!(!shown.contains(KEY), "the key leaked: {shown}");
    for event in &mut events {
        if let StreamEvent::Error { error } | StreamEvent::Retrying { error, .. } = event {
            error.message = unaddressed(&error.message);
        }
    }
    events
}

/// The error of a stream's terminal `Error` event.
pub fn terminal_error(events: &[StreamEvent]) -> corral_protocol::Error {
    match events.last() {
        Some(StreamEvent::Error { error }) => error.clone(),
        other => panic!("expected an error, got {other:?}"),
    }
}

/// Byte offset just after the first `n` bytes of `needle` in `body`.
pub fn offset_in(body: &str, needle: &str, n: usize) -> usize {
    body.find(needle).expect("needle in body") + n
}

/// The JSON object `value` is; a test fails on anything else.
pub fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}
