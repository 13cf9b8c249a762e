//! One connection to the proxy: read what the program asks for (an HTTP
//! `CONNECT host:port`, a plain HTTP request with an absolute URL, or a
//! SOCKS5 `CONNECT`), judge it, resolve the name once, refuse it if any
//! of its addresses is refused, connect to a checked address (never to
//! the name again, so a second lookup cannot point elsewhere), answer,
//! and copy bytes both ways. Each decision is one line of the log.

use super::address;
use super::Shared;
use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
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
enum Refusal {
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
    let (head, rest) = read_head(&mut client)?;
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut request = httparse::Request::new(&mut headers);
    let parsed = request.parse(&head);
    let (Ok(httparse::Status::Complete(_)), Some(method), Some(uri)) =
        (parsed, request.method, request.path)
    else {
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
        let mut server = match open(&target, shared, &shown) {
            Ok(server) => server,
            Err(refusal) => return refuse(&mut client, &refusal),
        };
        client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")?;
        server.write_all(&rest)?;
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
    let mut server = match open(&target, shared, &shown) {
        Ok(server) => server,
        Err(refusal) => return refuse(&mut client, &refusal),
    };
    // The request as the server expects it: the path alone, the proxy's
    // own headers dropped, one request per connection.
    let mut out = format!(
        "{method} {path} HTTP/1.{}\r\n",
        request.version.unwrap_or(1)
    )
    .into_bytes();
    for header in request.headers.iter() {
        let name = header.name.to_ascii_lowercase();
        if matches!(
            name.as_str(),
            "host" | "proxy-connection" | "proxy-authorization" | "connection" | "keep-alive"
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
    out.extend_from_slice(b"Connection: close\r\n\r\n");
    out.extend_from_slice(&rest);
    server.write_all(&out)?;
    let _ = client.set_read_timeout(None);
    super::super::forward::splice(client, server);
    Ok(())
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

/// Reads up to the end of the request head; returns it and what came after.
fn read_head(client: &mut TcpStream) -> io::Result<(Vec<u8>, Vec<u8>)> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let rest = buf.split_off(end + 4);
            return Ok((buf, rest));
        }
        if buf.len() > HEAD_LIMIT {
            return Err(io::Error::other("request head too large"));
        }
        let n = client.read(&mut chunk)?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
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
    if !PORTS.contains(&target.port) {
        return Err(Refusal::Denied(format!(
            "port {} is not allowed (only 80 and 443)",
            target.port
        )));
    }
    let literal = target.host.parse::<IpAddr>().ok();
    if let Some(why) = literal.and_then(address::refused) {
        return Err(Refusal::Denied(format!("{} is {why}", target.host)));
    }
    if !shared.domain_allowed(&target.host) {
        let hint = match shared.egress.ask {
            Some(_) => "the user did not allow it",
            None => "ask the user to allow it (`corral-cli call` or `mcp`: --allow-domain NAME)",
        };
        return Err(Refusal::Denied(format!(
            "`{}` is not on the network allowlist; {hint}",
            target.host
        )));
    }
    let addresses: Vec<SocketAddr> = match literal {
        Some(ip) => vec![SocketAddr::new(ip, target.port)],
        None => (target.host.as_str(), target.port)
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
}
