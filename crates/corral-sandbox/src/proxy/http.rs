//! One connection to the proxy: read what the program asks for (an HTTP
//! `CONNECT host:port`, a plain HTTP request with an absolute URL, or a
//! SOCKS5 `CONNECT`), judge it, resolve the name once, refuse it if any
//! of its addresses is refused, connect to a checked address (never to
//! the name again, so a second lookup cannot point elsewhere), answer,
//! and copy bytes both ways. Each decision is one line of the log.
//!
//! A plain HTTP request is the one request of its connection: the head
//! is taken off the socket up to its blank line and no further, then the
//! body its `Content-Length` declares and not a byte more; whatever the
//! program sends after that (a second, pipelined request naming another
//! host) is never read, so never forwarded. A body whose end is not
//! declared that way (`Transfer-Encoding`, a doubtful `Content-Length`)
//! is refused before anything is connected.

use super::address;
use super::Shared;
use std::io::{self, Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

/// Largest request head read.
const HEAD_LIMIT: usize = 16 * 1024;
/// How long a program may take to say what it wants.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
/// How long connecting to one address may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The ports a program may reach (HTTP and HTTPS).
const PORTS: [u16; 2] = [80, 443];

/// Where a program wants to go.
struct Target {
    host: String,
    port: u16,
}

/// Why a connection was not made.
pub(super) enum Refusal {
    /// By the rules: HTTP 403, SOCKS "not allowed".
    Denied(String),
    /// The name or the server could not be reached: HTTP 502.
    Unreachable(String),
}

pub(super) fn serve(client: TcpStream, shared: &Shared) {
    let _ = client.set_read_timeout(Some(HEAD_TIMEOUT));
    let mut first = [0u8; 1];
    match client.peek(&mut first) {
        Ok(1) if first[0] == 5 => socks5(client, shared),
        Ok(1) => {
            let _ = http(client, shared);
        }
        _ => {
            let _ = client.shutdown(std::net::Shutdown::Both);
        }
    }
}

fn http(mut client: TcpStream, shared: &Shared) -> io::Result<()> {
    let head = read_head(&client)?;
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut request = httparse::Request::new(&mut headers);
    // The head parsed must be all that was read: one that ends earlier
    // (by bare line feeds) has something else after it.
    let whole =
        matches!(request.parse(&head), Ok(httparse::Status::Complete(n)) if n == head.len());
    let (true, Some(method), Some(uri)) = (whole, request.method, request.path) else {
        return answer(
            &mut client,
            "400 Bad Request",
            "the request could not be read",
        );
    };
    let method = method.to_string();
    if method.eq_ignore_ascii_case("CONNECT") {
        let Some(target) = authority(uri, 443) else {
            return answer(&mut client, "400 Bad Request", "CONNECT needs host:port");
        };
        let shown = format!("CONNECT {}:{}", target.host, target.port);
        let server = match open(&target, shared, &shown) {
            Ok(server) => server,
            Err(refusal) => return refuse(&mut client, &refusal),
        };
        client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")?;
        // What the program sent after the head is still unread: the
        // splice carries it, through the tunnel to the host judged.
        let _ = client.set_read_timeout(None);
        super::super::forward::splice(client, server);
        return Ok(());
    }
    let Some(after) = strip_scheme(uri, "http://") else {
        let why = "only absolute http:// URLs are proxied (https goes through CONNECT)";
        return answer(&mut client, "400 Bad Request", why);
    };
    let (authority_part, path) = match after.find(['/', '?']) {
        Some(at) => (&after[..at], &after[at..]),
        None => (after, "/"),
    };
    let Some(target) = authority(authority_part, 80) else {
        return answer(&mut client, "400 Bad Request", "the URL has no host");
    };
    let path = if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_string()
    };
    let shown = format!("{method} http://{}:{}{path}", target.host, target.port);
    let body = match body_length(request.headers) {
        Ok(body) => body,
        Err((status, why)) => {
            (shared.log)(&format!("corral proxy: refused {shown}: {why}"));
            return answer(&mut client, status, why);
        }
    };
    let mut server = match open(&target, shared, &shown) {
        Ok(server) => server,
        Err(refusal) => return refuse(&mut client, &refusal),
    };
    // The request as the server expects it: the path alone, the proxy's
    // own headers dropped, the body's length as judged, one request per
    // connection.
    let mut out = format!(
        "{method} {path} HTTP/1.{}\r\n",
        request.version.unwrap_or(1)
    )
    .into_bytes();
    for header in request.headers.iter() {
        let name = header.name.to_ascii_lowercase();
        if matches!(
            name.as_str(),
            "host"
                | "proxy-connection"
                | "proxy-authorization"
                | "connection"
                | "keep-alive"
                | "content-length"
        ) {
            continue;
        }
        out.extend_from_slice(header.name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(header.value);
        out.extend_from_slice(b"\r\n");
    }
    // The host judged is the host named: a `Host` of another site would
    // let a shared server answer for a domain never allowed.
    let host = if target.host.contains(':') {
        format!("[{}]", target.host)
    } else {
        target.host.clone()
    };
    let port = (target.port != 80).then(|| format!(":{}", target.port));
    out.extend_from_slice(format!("Host: {host}{}\r\n", port.unwrap_or_default()).as_bytes());
    if let Some(body) = body {
        out.extend_from_slice(format!("Content-Length: {body}\r\n").as_bytes());
    }
    out.extend_from_slice(b"Connection: close\r\n\r\n");
    server.write_all(&out)?;
    relay_one(client, server, body.unwrap_or(0));
    Ok(())
}

/// The body's length a request head declares (`None`: no body, as a
/// request without `Content-Length` or `Transfer-Encoding` has none), or
/// the answer refusing a request whose end cannot be known: a
/// `Transfer-Encoding` (chunked or any other), more than one
/// `Content-Length`, or one that is not plain digits.
fn body_length(
    headers: &[httparse::Header<'_>],
) -> Result<Option<u64>, (&'static str, &'static str)> {
    let named = |name: &'static str| {
        headers
            .iter()
            .filter(move |h| h.name.eq_ignore_ascii_case(name))
    };
    if named("transfer-encoding").next().is_some() {
        return Err((
            "411 Length Required",
            "a request body is forwarded only with a Content-Length \
             (Transfer-Encoding, chunked or not, is refused)",
        ));
    }
    let mut lengths = named("content-length");
    let Some(length) = lengths.next() else {
        return Ok(None);
    };
    if lengths.next().is_some() {
        return Err(("400 Bad Request", "more than one Content-Length"));
    }
    let digits = length.value.trim_ascii();
    std::str::from_utf8(digits)
        .ok()
        .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|d| d.parse().ok())
        .map(Some)
        .ok_or(("400 Bad Request", "the Content-Length is not a number"))
}

/// Relays one request's body, `body` bytes read from `client` and not
/// one more, then the server's answer until the server closes; then
/// closes the client's connection. Bytes the program sent after the body
/// are never read (closing over them resets the connection).
fn relay_one(client: TcpStream, mut server: TcpStream, body: u64) {
    let _ = client.set_read_timeout(None);
    let sending = if body == 0 {
        None
    } else {
        let (Ok(client_in), Ok(mut server_out)) = (client.try_clone(), server.try_clone()) else {
            return;
        };
        let spawned = std::thread::Builder::new()
            .name("corral-proxy-body".into())
            .spawn(move || {
                let sent = io::copy(&mut client_in.take(body), &mut server_out);
                // Cut short: the server sees the request end.
                if !matches!(sent, Ok(n) if n == body) {
                    let _ = server_out.shutdown(Shutdown::Write);
                }
            });
        let Ok(sending) = spawned else {
            return;
        };
        Some(sending)
    };
    let mut client_out = client;
    let _ = io::copy(&mut server, &mut client_out);
    // Also wakes the body's copy if the program is still sending it.
    let _ = client_out.shutdown(Shutdown::Both);
    if let Some(sending) = sending {
        let _ = sending.join();
    }
}

/// `rest` of `uri` after `scheme`, compared without case.
fn strip_scheme<'a>(uri: &'a str, scheme: &str) -> Option<&'a str> {
    let head = uri.get(..scheme.len())?;
    head.eq_ignore_ascii_case(scheme)
        .then(|| &uri[scheme.len()..])
}

/// `host[:port]` or `[v6][:port]`; no user part.
fn authority(text: &str, default_port: u16) -> Option<Target> {
    if text.contains('@') || text.is_empty() {
        return None;
    }
    let (host, port) = if let Some(v6) = text.strip_prefix('[') {
        let (host, after) = v6.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None if after.is_empty() => default_port,
            None => return None,
        };
        (host, port)
    } else {
        match text.rsplit_once(':') {
            Some((host, port)) => (host, port.parse().ok()?),
            None => (text, default_port),
        }
    };
    (!host.is_empty()).then(|| Target {
        host: super::domains::normal(host),
        port,
    })
}

/// Reads the request head up to its blank line and nothing after it:
/// each round peeks at what arrived and takes off the socket only what
/// belongs to the head, so a body, a tunnel's first bytes or a second
/// request stays unread there.
fn read_head(client: &TcpStream) -> io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        let room = chunk.len().min(HEAD_LIMIT - head.len());
        if room == 0 {
            return Err(io::Error::other("request head too large"));
        }
        let n = client.peek(&mut chunk[..room])?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        // The blank line may begin in what was taken before.
        let from = head.len().saturating_sub(3);
        let taken = head.len();
        head.extend_from_slice(&chunk[..n]);
        let end = head[from..]
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .map(|at| from + at + 4);
        head.truncate(end.unwrap_or(head.len()));
        // The same bytes as peeked: this thread alone reads the socket.
        let mut client = client;
        client.read_exact(&mut chunk[..head.len() - taken])?;
        if end.is_some() {
            return Ok(head);
        }
    }
}

/// Judges `target`, resolves it once, checks every address and connects
/// to a checked one. Logs the decision as `shown`.
fn open(target: &Target, shared: &Shared, shown: &str) -> Result<TcpStream, Refusal> {
    let result = decide_and_connect(target, shared);
    match &result {
        Ok((_, address)) => (shared.log)(&format!(
            "corral proxy: allowed {shown} (connected to {})",
            address.ip()
        )),
        Err(Refusal::Denied(why)) => {
            shared.note_refused(&format!("{}:{} ({why})", target.host, target.port));
            (shared.log)(&format!("corral proxy: refused {shown}: {why}"));
        }
        Err(Refusal::Unreachable(why)) => {
            (shared.log)(&format!("corral proxy: failed {shown}: {why}"));
        }
    }
    result.map(|(stream, _)| stream)
}

fn decide_and_connect(
    target: &Target,
    shared: &Shared,
) -> Result<(TcpStream, SocketAddr), Refusal> {
    let can_ask = shared.egress.ask.is_some();
    judge_and_connect(&target.host, target.port, can_ask, &|host| {
        shared.domain_allowed(host)
    })
}

/// The proxy's rules for one connection, whoever makes it: the port, a
/// literal address, the domain (`allowed`, which may ask), then the name
/// resolved once and every address checked, then a connection to a
/// checked address. `can_ask` only chooses the refusal's hint.
pub(super) fn judge_and_connect(
    host: &str,
    port: u16,
    can_ask: bool,
    allowed: &dyn Fn(&str) -> bool,
) -> Result<(TcpStream, SocketAddr), Refusal> {
    if !PORTS.contains(&port) {
        return Err(Refusal::Denied(format!(
            "port {port} is not allowed (only 80 and 443)"
        )));
    }
    let literal = host.parse::<IpAddr>().ok();
    if let Some(why) = literal.and_then(address::refused) {
        return Err(Refusal::Denied(format!("{host} is {why}")));
    }
    if !allowed(host) {
        let hint = if can_ask {
            "the user did not allow it"
        } else {
            "ask the user to allow it (`corral-cli call` or `mcp`: --allow-domain NAME)"
        };
        return Err(Refusal::Denied(format!(
            "`{host}` is not on the network allowlist; {hint}"
        )));
    }
    let addresses: Vec<SocketAddr> = match literal {
        Some(ip) => vec![SocketAddr::new(ip, port)],
        None => (host, port)
            .to_socket_addrs()
            .map_err(|e| Refusal::Unreachable(format!("could not resolve it ({e})")))?
            .collect(),
    };
    if let Some((ip, why)) = addresses
        .iter()
        .find_map(|a| address::refused(a.ip()).map(|why| (a.ip(), why)))
    {
        return Err(Refusal::Denied(format!(
            "it resolves to {ip}, {why}, which is never reached"
        )));
    }
    let mut last = None;
    for address in addresses {
        match TcpStream::connect_timeout(&address, CONNECT_TIMEOUT) {
            Ok(stream) => return Ok((stream, address)),
            Err(e) => last = Some(e),
        }
    }
    Err(Refusal::Unreachable(match last {
        Some(e) => format!("could not connect ({e})"),
        None => "it has no address".into(),
    }))
}

fn refuse(client: &mut TcpStream, refusal: &Refusal) -> io::Result<()> {
    match refusal {
        Refusal::Denied(why) => answer(client, "403 Forbidden", why),
        Refusal::Unreachable(why) => answer(client, "502 Bad Gateway", why),
    }
}

fn answer(client: &mut TcpStream, status: &str, why: &str) -> io::Result<()> {
    let body = format!("corral proxy: {why}\n");
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    client.write_all(head.as_bytes())?;
    client.write_all(body.as_bytes())?;
    client.flush()
}

/// SOCKS5 without authentication, `CONNECT` only.
fn socks5(mut client: TcpStream, shared: &Shared) {
    let Ok(Some(target)) = socks5_request(&mut client) else {
        return;
    };
    let shown = format!("SOCKS {}:{}", target.host, target.port);
    // Replies: 0 succeeded, 2 not allowed by the rules, 4 host unreachable.
    match open(&target, shared, &shown) {
        Ok(server) => {
            if client.write_all(&[5, 0, 0, 1, 0, 0, 0, 0, 0, 0]).is_ok() {
                let _ = client.set_read_timeout(None);
                super::super::forward::splice(client, server);
            }
        }
        Err(refusal) => {
            let code = match refusal {
                Refusal::Denied(_) => 2,
                Refusal::Unreachable(_) => 4,
            };
            let _ = client.write_all(&[5, code, 0, 1, 0, 0, 0, 0, 0, 0]);
        }
    }
}

/// Reads the greeting and the request; answers what it cannot serve.
fn socks5_request(client: &mut TcpStream) -> io::Result<Option<Target>> {
    let mut head = [0u8; 2];
    client.read_exact(&mut head)?;
    let mut methods = vec![0u8; usize::from(head[1])];
    client.read_exact(&mut methods)?;
    if !methods.contains(&0) {
        client.write_all(&[5, 0xff])?;
        return Ok(None);
    }
    client.write_all(&[5, 0])?;
    let mut request = [0u8; 4];
    client.read_exact(&mut request)?;
    let host = match request[3] {
        1 => {
            let mut v4 = [0u8; 4];
            client.read_exact(&mut v4)?;
            IpAddr::from(v4).to_string()
        }
        3 => {
            let mut len = [0u8; 1];
            client.read_exact(&mut len)?;
            let mut name = vec![0u8; usize::from(len[0])];
            client.read_exact(&mut name)?;
            String::from_utf8_lossy(&name).into_owned()
        }
        4 => {
            let mut v6 = [0u8; 16];
            client.read_exact(&mut v6)?;
            IpAddr::from(v6).to_string()
        }
        _ => {
            client.write_all(&[5, 8, 0, 1, 0, 0, 0, 0, 0, 0])?;
            return Ok(None);
        }
    };
    let mut port = [0u8; 2];
    client.read_exact(&mut port)?;
    if request[1] != 1 {
        // Only CONNECT: no BIND, no UDP.
        client.write_all(&[5, 7, 0, 1, 0, 0, 0, 0, 0, 0])?;
        return Ok(None);
    }
    Ok(Some(Target {
        host: super::domains::normal(&host),
        port: u16::from_be_bytes(port),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authorities_are_read_with_their_default_port_and_without_user_parts() {
        let read = |text: &str| authority(text, 80).map(|t| (t.host, t.port));
        assert_eq!(read("Example.org"), Some(("example.org".into(), 80)));
        assert_eq!(read("example.org:443"), Some(("example.org".into(), 443)));
        assert_eq!(read("[::1]:8080"), Some(("::1".into(), 8080)));
        assert_eq!(read("[::1]"), Some(("::1".into(), 80)));
        assert_eq!(read("user@example.org"), None);
        assert_eq!(read("example.org:x"), None);
        assert_eq!(read(":80"), None);
        assert_eq!(read(""), None);
    }

    #[test]
    fn a_body_is_bounded_by_one_content_length_of_digits_or_refused() {
        let length = |headers: &[(&'static str, &'static str)]| {
            let headers: Vec<_> = headers
                .iter()
                .map(|(name, value)| httparse::Header {
                    name,
                    value: value.as_bytes(),
                })
                .collect();
            body_length(&headers).map_err(|(status, _)| status)
        };
        assert_eq!(length(&[("Accept", "*/*")]), Ok(None));
        assert_eq!(length(&[("content-length", " 12 ")]), Ok(Some(12)));
        assert_eq!(length(&[("Content-Length", "0")]), Ok(Some(0)));
        for refused in [
            &[("Transfer-Encoding", "chunked")][..],
            &[("Content-Length", "5"), ("transfer-encoding", "identity")],
        ] {
            assert_eq!(length(refused), Err("411 Length Required"), "{refused:?}");
        }
        for refused in [
            &[("Content-Length", "5"), ("Content-Length", "5")][..],
            &[("Content-Length", "5, 5")],
            &[("Content-Length", "+5")],
            &[("Content-Length", "-1")],
            &[("Content-Length", "")],
            &[("Content-Length", "99999999999999999999999")],
        ] {
            assert_eq!(length(refused), Err("400 Bad Request"), "{refused:?}");
        }
    }

    #[test]
    fn the_head_is_read_up_to_its_blank_line_and_what_follows_stays_unread() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut program = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (proxy, _) = listener.accept().unwrap();
        // The blank line split across two arrivals, then a second request.
        program
            .write_all(b"GET http://a.test/ HTTP/1.1\r\nX: y\r\n\r")
            .unwrap();
        std::thread::sleep(Duration::from_millis(50));
        program
            .write_all(b"\nGET http://b.test/ HTTP/1.1\r\n\r\n")
            .unwrap();
        drop(program);
        let head = read_head(&proxy).unwrap();
        assert_eq!(head, b"GET http://a.test/ HTTP/1.1\r\nX: y\r\n\r\n");
        let mut after = String::new();
        (&proxy).read_to_string(&mut after).unwrap();
        assert_eq!(after, "GET http://b.test/ HTTP/1.1\r\n\r\n");
    }
}
