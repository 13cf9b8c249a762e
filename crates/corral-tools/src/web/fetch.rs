//! One GET, hop by hop: each connection is made by the egress proxy's
//! rules (`shell::connect_out`: the port, the domain allowlist or the
//! user's answer, the name resolved once and every address checked), TLS
//! over it for `https`, HTTP/1.1 with `Connection: close`, the head read
//! with httparse, the body by its framing (`Content-Length`, chunked, or
//! to the end) and never more than the cap: what is read is bounded
//! before anything is allocated for it. A redirect is followed to a URL
//! judged again from the start, at most [`MAX_REDIRECTS`] times.

use crate::error::{Error, ErrorCode, Result};
use crate::shell::{self, CancelToken, Egress, Refused};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use url::Url;

/// Redirects followed for one fetch.
pub const MAX_REDIRECTS: usize = 5;
/// The most of a response head read.
const HEAD_LIMIT: usize = 64 * 1024;
/// How long one hop may take once connected (the user's answer about a
/// domain is not counted).
const HOP_TIME: Duration = Duration::from_secs(60);
/// How often a waiting read looks at the deadline and the stop switch.
const POLL: Duration = Duration::from_millis(250);

/// A response as read: the URL it came from (after redirects), its
/// status and type, and its body up to the cap.
#[derive(Debug)]
pub struct Response {
    pub url: Url,
    pub status: u16,
    pub content_type: Option<String>,
    pub body: Vec<u8>,
    /// The whole body was read (it was not over the cap).
    pub complete: bool,
    /// The length the server declared, if it did.
    pub declared: Option<u64>,
}

/// GETs `url` through the proxy's rules, following redirects; reads at
/// most `cap` bytes of the body.
pub fn get(url: &Url, egress: &Egress, cancel: &CancelToken, cap: usize) -> Result<Response> {
    let mut url = url.clone();
    let mut redirects = 0;
    loop {
        check_url(&url)?;
        let hop = hop_once(&url, egress, cancel, cap)?;
        let Some(location) = hop.location else {
            return Ok(hop.response);
        };
        let next = url.join(&location).map_err(|e| {
            fetch_error(
                &url,
                "redirect",
                format!("`{url}` redirects to `{location}`, which is not a URL ({e})"),
            )
        })?;
        redirects += 1;
        if redirects > MAX_REDIRECTS {
            return Err(fetch_error(
                &url,
                "redirects",
                format!("more than {MAX_REDIRECTS} redirects, the last from `{url}`"),
            ));
        }
        url = without_fragment(next);
    }
}

/// The URL without its `#fragment`, which is never sent.
pub fn without_fragment(mut url: Url) -> Url {
    url.set_fragment(None);
    url
}

/// What web_fetch reads: `http` or `https`, a host, no user part.
pub fn check_url(url: &Url) -> Result<()> {
    let refuse = |why: &str| {
        Err(Error::invalid_input(format!("`{url}`: {why}"))
            .hint("Give an absolute http:// or https:// URL.")
            .detail("url", url.as_str()))
    };
    if !matches!(url.scheme(), "http" | "https") {
        return refuse("only http and https URLs are fetched");
    }
    if url.host_str().is_none_or(str::is_empty) {
        return refuse("the URL has no host");
    }
    if !url.username().is_empty() || url.password().is_some() {
        return refuse("a URL with a user name or password is not fetched");
    }
    Ok(())
}

/// One hop's response, and where it redirects to.
struct Hop {
    response: Response,
    location: Option<String>,
}

fn hop_once(url: &Url, egress: &Egress, cancel: &CancelToken, cap: usize) -> Result<Hop> {
    let host = url.host_str().unwrap_or_default();
    let port = url.port_or_known_default().unwrap_or(80);
    let (stream, _) = shell::connect_out(egress, host, port).map_err(|refused| match refused {
        Refused::Denied(why) => {
            Error::new(ErrorCode::Denied, format!("`{url}` was not fetched: {why}"))
                .hint(
                    "Only public addresses on ports 80 and 443 are reached, and a domain off the \
             network allowlist only once the user allows it.",
                )
                .detail("url", url.as_str())
                .detail("host", host)
        }
        Refused::Unreachable(why) => {
            fetch_error(url, "connect", format!("`{host}`: {why}")).retryable(true)
        }
    })?;
    let patient = Patient {
        stream,
        deadline: Instant::now() + HOP_TIME,
        cancel: cancel.clone(),
    };
    patient
        .stream
        .set_read_timeout(Some(POLL))
        .and_then(|()| patient.stream.set_write_timeout(Some(POLL)))
        .map_err(|e| io_error(url, e))?;
    let mut conn: Box<dyn ReadWrite> = if url.scheme() == "https" {
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let name = rustls::pki_types::ServerName::try_from(bare.to_string())
            .map_err(|e| fetch_error(url, "tls", format!("`{host}` is no TLS name ({e})")))?;
        let tls = tls_config()
            .and_then(|config| rustls::ClientConnection::new(config, name))
            .map_err(|e| fetch_error(url, "tls", format!("TLS could not start: {e}")))?;
        Box::new(rustls::StreamOwned::new(tls, patient))
    } else {
        Box::new(patient)
    };
    conn.write_all(request(url).as_bytes())
        .and_then(|()| conn.flush())
        .map_err(|e| io_error(url, e))?;
    let mut reader = BufReader::new(conn);
    let head = loop {
        let head = read_head(&mut reader).map_err(|e| io_error(url, e))?;
        // Interim answers (100 Continue, 103 Early Hints) come before the one.
        if !(100..200).contains(&head.status) || head.status == 101 {
            break head;
        }
    };
    let redirect = matches!(head.status, 301 | 302 | 303 | 307 | 308);
    if redirect {
        if let Some(location) = head.location {
            return Ok(Hop {
                response: Response {
                    url: url.clone(),
                    status: head.status,
                    content_type: head.content_type,
                    body: Vec::new(),
                    complete: true,
                    declared: None,
                },
                location: Some(location),
            });
        }
    }
    let no_body = matches!(head.status, 204 | 304);
    let (body, complete) = if no_body {
        (Vec::new(), true)
    } else {
        let framed: Box<dyn Read + '_> = if head.chunked {
            Box::new(Chunked::new(&mut reader))
        } else if let Some(length) = head.length {
            Box::new((&mut reader).take(length))
        } else {
            // Ended by the close: a TLS server that closes without its
            // close_notify has still sent the whole body.
            Box::new(ToClose(&mut reader))
        };
        read_capped(framed, cap, head.length).map_err(|e| io_error(url, e))?
    };
    Ok(Hop {
        response: Response {
            url: url.clone(),
            status: head.status,
            content_type: head.content_type,
            body,
            complete,
            declared: head.length,
        },
        location: None,
    })
}

/// Reads at most `cap` bytes, then one more to learn whether there was
/// more. The buffer grows with what arrives, from no more than the cap
/// whatever length the server declared.
fn read_capped(
    framed: impl Read,
    cap: usize,
    declared: Option<u64>,
) -> io::Result<(Vec<u8>, bool)> {
    let start = declared
        .and_then(|d| usize::try_from(d).ok())
        .unwrap_or(0)
        .min(cap);
    let mut body = Vec::with_capacity(start);
    let limit = u64::try_from(cap).unwrap_or(u64::MAX).saturating_add(1);
    framed.take(limit).read_to_end(&mut body)?;
    let complete = body.len() <= cap;
    body.truncate(cap);
    Ok((body, complete))
}

/// The request: the path and query alone, the host named, one request.
fn request(url: &Url) -> String {
    let target = &url[url::Position::BeforePath..url::Position::AfterQuery];
    let target = if target.is_empty() { "/" } else { target };
    let host = url.host_str().unwrap_or_default();
    let port = url.port().map(|p| format!(":{p}")).unwrap_or_default();
    format!(
        "GET {target} HTTP/1.1\r\nHost: {host}{port}\r\nUser-Agent: Corral/{} (web_fetch)\r\n\
         Accept: text/html,application/xhtml+xml,text/markdown;q=0.9,text/plain;q=0.9,*/*;q=0.5\r\n\
         Accept-Encoding: identity\r\nConnection: close\r\n\r\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// What the head of a response says that the fetch needs.
struct Head {
    status: u16,
    content_type: Option<String>,
    length: Option<u64>,
    chunked: bool,
    location: Option<String>,
}

fn read_head(reader: &mut impl BufRead) -> io::Result<Head> {
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") && !head.ends_with(b"\n\n") {
        let room = (HEAD_LIMIT - head.len()) as u64;
        if room == 0 {
            return Err(io::Error::other("the response head is over 64 KiB"));
        }
        let before = head.len();
        reader.take(room).read_until(b'\n', &mut head)?;
        if head.len() == before {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed the connection before its answer's head ended",
            ));
        }
    }
    let mut headers = [httparse::EMPTY_HEADER; 128];
    let mut response = httparse::Response::new(&mut headers);
    match response.parse(&head) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) => return Err(io::Error::other("the response head is cut")),
        Err(e) => {
            return Err(io::Error::other(format!(
                "the response head is not HTTP ({e})"
            )))
        }
    }
    let value = |name: &str| {
        response
            .headers
            .iter()
            .filter(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| String::from_utf8_lossy(h.value).trim().to_string())
            .collect::<Vec<_>>()
    };
    let chunked = value("transfer-encoding")
        .iter()
        .any(|v| v.to_ascii_lowercase().contains("chunked"));
    let lengths = value("content-length");
    let length = match lengths.as_slice() {
        [] => None,
        [one, rest @ ..] if rest.iter().all(|r| r == one) => Some(
            one.parse::<u64>()
                .map_err(|_| io::Error::other("the Content-Length is not a number"))?,
        ),
        _ => return Err(io::Error::other("the response has two Content-Lengths")),
    };
    Ok(Head {
        status: response.code.unwrap_or(0),
        content_type: value("content-type").into_iter().next(),
        // A chunked body's own framing wins over a length.
        length: length.filter(|_| !chunked),
        chunked,
        location: value("location").into_iter().next(),
    })
}

/// A chunked body, read as its chunks' data.
struct Chunked<R> {
    inner: R,
    /// Bytes left in the current chunk; `None` before a size line.
    left: Option<u64>,
    done: bool,
}

impl<R: BufRead> Chunked<R> {
    fn new(inner: R) -> Self {
        Chunked {
            inner,
            left: None,
            done: false,
        }
    }

    /// One line of at most 4 KiB, without its line end.
    fn line(&mut self) -> io::Result<String> {
        let mut line = Vec::new();
        (&mut self.inner).take(4096).read_until(b'\n', &mut line)?;
        if !line.ends_with(b"\n") {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "a chunk's size line did not end",
            ));
        }
        Ok(String::from_utf8_lossy(&line).trim().to_string())
    }
}

impl<R: BufRead> Read for Chunked<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.done || buf.is_empty() {
                return Ok(0);
            }
            match self.left {
                None => {
                    let line = self.line()?;
                    let size = line.split(';').next().unwrap_or("").trim();
                    let size = u64::from_str_radix(size, 16).map_err(|_| {
                        io::Error::other(format!("a chunk size `{size}` is not hex"))
                    })?;
                    if size == 0 {
                        // The trailers, up to their blank line.
                        while !self.line()?.is_empty() {}
                        self.done = true;
                        return Ok(0);
                    }
                    self.left = Some(size);
                }
                Some(0) => {
                    if !self.line()?.is_empty() {
                        return Err(io::Error::other("a chunk did not end where its size said"));
                    }
                    self.left = None;
                }
                Some(left) => {
                    let room = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                    let n = self.inner.read(&mut buf[..room])?;
                    if n == 0 {
                        return Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            "the body ended inside a chunk",
                        ));
                    }
                    self.left = Some(left - n as u64);
                    return Ok(n);
                }
            }
        }
    }
}

/// A body that ends when the connection closes, however it closes.
struct ToClose<R>(R);

impl<R: Read> Read for ToClose<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.0.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(0),
            other => other,
        }
    }
}

trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

/// The connection, read and written in short waits so that a stop or
/// the hop's deadline ends it.
struct Patient {
    stream: TcpStream,
    deadline: Instant,
    cancel: CancelToken,
}

/// Why a [`Patient`] gave up.
#[derive(Debug)]
enum Stop {
    Cancelled,
    Deadline,
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stop::Cancelled => f.write_str("stopped"),
            Stop::Deadline => write!(f, "no answer within {} s", HOP_TIME.as_secs()),
        }
    }
}

impl std::error::Error for Stop {}

impl Patient {
    fn retry<T>(&mut self, mut op: impl FnMut(&mut TcpStream) -> io::Result<T>) -> io::Result<T> {
        loop {
            if self.cancel.is_cancelled() {
                return Err(io::Error::other(Stop::Cancelled));
            }
            if Instant::now() >= self.deadline {
                return Err(io::Error::new(io::ErrorKind::TimedOut, Stop::Deadline));
            }
            match op(&mut self.stream) {
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock
                            | io::ErrorKind::TimedOut
                            | io::ErrorKind::Interrupted
                    ) => {}
                other => return other,
            }
        }
    }
}

impl Read for Patient {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.retry(|s| s.read(buf))
    }
}

impl Write for Patient {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.retry(|s| s.write(buf))
    }
    fn flush(&mut self) -> io::Result<()> {
        self.stream.flush()
    }
}

/// The TLS settings, made once: ring, the Mozilla roots, no client
/// certificate.
fn tls_config() -> std::result::Result<Arc<rustls::ClientConfig>, rustls::Error> {
    static CONFIG: OnceLock<Arc<rustls::ClientConfig>> = OnceLock::new();
    if let Some(config) = CONFIG.get() {
        return Ok(config.clone());
    }
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(CONFIG.get_or_init(|| Arc::new(config)).clone())
}

/// A failure to fetch that is no refusal: `io`, with `details.reason`.
pub(crate) fn fetch_error(url: &Url, reason: &str, message: impl Into<String>) -> Error {
    Error::new(ErrorCode::Io, message)
        .hint("Check the URL; try again later if the server may be down.")
        .detail("url", url.as_str())
        .detail("reason", reason)
}

/// An error met on the connection: a stop is `cancelled`, a deadline a
/// retryable `io` timeout, anything else `io`.
fn io_error(url: &Url, e: io::Error) -> Error {
    match e.get_ref().and_then(|inner| inner.downcast_ref::<Stop>()) {
        Some(Stop::Cancelled) => Error::new(
            ErrorCode::Cancelled,
            format!("fetching `{url}` was stopped"),
        )
        .detail("url", url.as_str()),
        Some(Stop::Deadline) => fetch_error(
            url,
            "timeout",
            format!("`{url}` did not answer within {} s", HOP_TIME.as_secs()),
        )
        .retryable(true),
        None => {
            let tls = e
                .get_ref()
                .is_some_and(|inner| inner.downcast_ref::<rustls::Error>().is_some());
            let reason = if tls { "tls" } else { "connection" };
            fetch_error(url, reason, format!("fetching `{url}` failed: {e}"))
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_chunked_body_is_read_as_its_data_with_extensions_and_trailers() {
        let wire = b"4;x=y\r\nWiki\r\n5\r\npedia\r\n0\r\nX-T: 1\r\n\r\nafter";
        let mut body = String::new();
        Chunked::new(&wire[..]).read_to_string(&mut body).unwrap();
        assert_eq!(body, "Wikipedia");
        let mut bad = String::new();
        assert!(Chunked::new(&b"zz\r\nab\r\n"[..])
            .read_to_string(&mut bad)
            .is_err());
        assert!(Chunked::new(&b"5\r\nab"[..])
            .read_to_string(&mut bad)
            .is_err());
    }

    #[test]
    fn the_body_is_cut_at_the_cap_and_says_so() {
        let (body, complete) = read_capped(&b"0123456789"[..], 4, Some(1 << 40)).unwrap();
        assert_eq!((body.as_slice(), complete), (&b"0123"[..], false));
        let (body, complete) = read_capped(&b"0123"[..], 4, None).unwrap();
        assert_eq!((body.as_slice(), complete), (&b"0123"[..], true));
    }

    #[test]
    fn the_request_names_the_path_query_and_host_and_no_fragment() {
        let url = without_fragment(Url::parse("http://Example.org:8080/a%20b?q=1#frag").unwrap());
        let request = request(&url);
        assert!(
            request.starts_with("GET /a%20b?q=1 HTTP/1.1\r\nHost: example.org:8080\r\n"),
            "{request}"
        );
        assert!(request.ends_with("Connection: close\r\n\r\n"));
        let bare = request_of("https://example.org");
        assert!(
            bare.starts_with("GET / HTTP/1.1\r\nHost: example.org\r\n"),
            "{bare}"
        );
    }

    fn request_of(url: &str) -> String {
        request(&Url::parse(url).unwrap())
    }

    #[test]
    fn only_http_urls_with_a_host_and_no_user_are_fetched() {
        for bad in [
            "file:///etc/passwd",
            "ftp://example.org/x",
            "http://user:pw@example.org/",
            "http://user@example.org/",
            "data:text/plain,hi",
        ] {
            let err = check_url(&Url::parse(bad).unwrap()).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidInput, "{bad}");
        }
        check_url(&Url::parse("https://example.org/x").unwrap()).unwrap();
    }
}
