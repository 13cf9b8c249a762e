//! A release of the app as its updater meets one: a server on 127.0.0.1
//! serving the manifest and the builds, a release key made for the test
//! (none is committed), and an installed app's file to replace.

use base64::Engine;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A release server, its key and an installed app, made for one test.
pub struct Release {
    /// Where the server listens: `http://127.0.0.1:PORT`.
    pub url: String,
    /// The key the app trusts; its builds are signed with it.
    pub key: ReleaseKey,
    /// The installed app's file, version 0.1.0 (the mock app's), in
    /// `dir/prefix/bin/corral`.
    pub exe: PathBuf,
    /// Holds the install; removed when the release is dropped.
    pub dir: tempfile::TempDir,
    files: Arc<Mutex<HashMap<String, Vec<u8>>>>,
    requests: Arc<Mutex<Vec<String>>>,
}

impl Release {
    /// A server serving nothing yet, a new key, and the app installed.
    pub fn new() -> Release {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let files: Arc<Mutex<HashMap<String, Vec<u8>>>> = Arc::default();
        let requests: Arc<Mutex<Vec<String>>> = Arc::default();
        let (served, asked) = (files.clone(), requests.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                answer(stream, &served, &asked);
            }
        });
        let dir = tempfile::tempdir().unwrap();
        let exe = installed(dir.path());
        Release {
            url,
            key: ReleaseKey::new(),
            exe,
            dir,
            files,
            requests,
        }
    }

    /// Where the app finds the manifest.
    pub fn manifest_url(&self) -> String {
        format!("{}/latest.json", self.url)
    }

    /// Serves `body` at `path`.
    pub fn serve(&self, path: &str, body: Vec<u8>) {
        self.files.lock().unwrap().insert(path.to_string(), body);
    }

    /// Serves the manifest: `version` is the build at `build_path`, with
    /// `signature`.
    pub fn announce(&self, version: &str, build_path: &str, signature: &str) {
        let target = format!("linux-{}", std::env::consts::ARCH);
        let manifest = serde_json::json!({
            "version": version,
            "notes": "What changed",
            "pub_date": "2026-11-26T12:00:00Z",
            "platforms": { target: { "url": format!("{}{build_path}", self.url), "signature": signature } },
        });
        self.serve("/latest.json", serde_json::to_vec(&manifest).unwrap());
    }

    /// Publishes `version` as a release does: its build at
    /// `/corral-VERSION`, signed with the key, and the manifest naming it.
    /// Returns the build.
    pub fn publish(&self, version: &str) -> Vec<u8> {
        let build = build(version);
        let path = format!("/corral-{version}");
        self.serve(&path, build.clone());
        self.announce(version, &path, &self.key.sign(&build, version));
        build
    }

    /// The paths asked for, in order.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

impl Default for Release {
    fn default() -> Self {
        Release::new()
    }
}

/// Answers one request with the file at its path, or 404.
fn answer(
    mut stream: std::net::TcpStream,
    files: &Mutex<HashMap<String, Vec<u8>>>,
    requests: &Mutex<Vec<String>>,
) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    reader.read_line(&mut request_line).unwrap();
    // The headers, up to the blank line.
    let mut line = String::new();
    while reader.read_line(&mut line).unwrap() > 2 {
        line.clear();
    }
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("")
        .to_string();
    requests.lock().unwrap().push(path.clone());
    let body = files.lock().unwrap().get(&path).cloned();
    let (status, body) = match body {
        Some(body) => ("200 OK", body),
        None => ("404 Not Found", b"not found".to_vec()),
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(&body);
}

/// A release key pair, as `tauri signer generate` would make one.
pub struct ReleaseKey(minisign::KeyPair);

impl ReleaseKey {
    /// A new key pair.
    pub fn new() -> ReleaseKey {
        ReleaseKey(minisign::KeyPair::generate_unencrypted_keypair().unwrap())
    }

    /// What the app carries: base64 of the public key file.
    pub fn public(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(self.0.pk.to_box().unwrap().into_string())
    }

    /// What the manifest carries: base64 of the signature file, whose
    /// trusted (signed) comment names the version.
    pub fn sign(&self, build: &[u8], version: &str) -> String {
        let signature = minisign::sign(
            None,
            &self.0.sk,
            build,
            Some(&format!(
                "timestamp:1700000000\tfile:corral\tversion:{version}"
            )),
            Some("signature from the release key"),
        )
        .unwrap();
        base64::engine::general_purpose::STANDARD.encode(signature.into_string())
    }
}

impl Default for ReleaseKey {
    fn default() -> Self {
        ReleaseKey::new()
    }
}

/// A newer build: a real executable (the system's `true`) marked with its
/// version, so it runs and differs from the installed one.
pub fn build(version: &str) -> Vec<u8> {
    let mut bytes = std::fs::read("/bin/true").unwrap();
    bytes.extend_from_slice(format!("corral {version}").as_bytes());
    bytes
}

/// An installed app (version 0.1.0, the mock's) in `dir/prefix/bin/corral`.
fn installed(dir: &Path) -> PathBuf {
    let bin = dir.join("prefix/bin");
    std::fs::create_dir_all(&bin).unwrap();
    let exe = bin.join("corral");
    std::fs::write(&exe, b"\x7fELF corral 0.1.0").unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    exe
}
