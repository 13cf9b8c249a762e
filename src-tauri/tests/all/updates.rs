//! Updates through the real updater plugin: a release server on 127.0.0.1
//! serves the manifest and the builds, with keys made for each test (none
//! is committed). A newer build signed with the app's key replaces the
//! app's file; a changed build, a build signed with another key, or a
//! manifest that pairs a build with another version is refused and leaves
//! the file as it was; an install owned by a package manager, or the
//! switch off, fetches nothing at all.

use base64::Engine;
use corral_app::store::updates::UpdateSettings;
use corral_app::updates::{Install, Updates, PACKAGE_MARKER};
use corral_tools::Error;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tauri::test::{mock_builder, mock_context, noop_assets, MockRuntime};

/// A release server: the files it serves and the paths it was asked for.
struct ReleaseServer {
    url: String,
    files: Arc<Mutex<HashMap<String, Vec<u8>>>>,
    requests: Arc<Mutex<Vec<String>>>,
}

impl ReleaseServer {
    fn start() -> ReleaseServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let files: Arc<Mutex<HashMap<String, Vec<u8>>>> = Arc::default();
        let requests: Arc<Mutex<Vec<String>>> = Arc::default();
        let (served, asked) = (files.clone(), requests.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
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
                asked.lock().unwrap().push(path.clone());
                let body = served.lock().unwrap().get(&path).cloned();
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
        });
        ReleaseServer {
            url,
            files,
            requests,
        }
    }

    fn serve(&self, path: &str, body: Vec<u8>) {
        self.files.lock().unwrap().insert(path.to_string(), body);
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

/// A release key pair, as `tauri signer generate` would make one.
struct ReleaseKey(minisign::KeyPair);

impl ReleaseKey {
    fn new() -> ReleaseKey {
        ReleaseKey(minisign::KeyPair::generate_unencrypted_keypair().unwrap())
    }

    /// What the app carries: base64 of the public key file.
    fn public(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(self.0.pk.to_box().unwrap().into_string())
    }

    /// What the manifest carries: base64 of the signature file, whose
    /// trusted (signed) comment names the version.
    fn sign(&self, build: &[u8], version: &str) -> String {
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

/// A newer build: a real executable (the system's `true`) marked with its
/// version, so it runs and differs from the installed one.
fn build(version: &str) -> Vec<u8> {
    let mut bytes = std::fs::read("/bin/true").unwrap();
    bytes.extend_from_slice(format!("corral {version}").as_bytes());
    bytes
}

fn manifest(server: &ReleaseServer, version: &str, build_path: &str, signature: &str) -> Vec<u8> {
    let target = format!("linux-{}", std::env::consts::ARCH);
    serde_json::to_vec(&serde_json::json!({
        "version": version,
        "notes": "What changed",
        "pub_date": "2026-11-26T12:00:00Z",
        "platforms": { target: { "url": format!("{}{build_path}", server.url), "signature": signature } },
    }))
    .unwrap()
}

/// The app with the updater as the real one registers it, and the
/// plugin's configuration from the real `tauri.conf.json`.
fn app() -> tauri::App<MockRuntime> {
    let conf: serde_json::Value =
        serde_json::from_str(include_str!("../../../tauri.conf.json")).unwrap();
    let mut context = mock_context(noop_assets());
    context
        .config_mut()
        .plugins
        .0
        .insert("updater".into(), conf["plugins"]["updater"].clone());
    corral_app::updates::register(mock_builder())
        .build(context)
        .unwrap()
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

fn updates(server: &ReleaseServer, key: &ReleaseKey, exe: &Path) -> Updates {
    Updates {
        settings: UpdateSettings {
            check: true,
            manifest_url: format!("{}/latest.json", server.url),
        },
        key: Some(key.public()),
        executable: exe.to_path_buf(),
    }
}

fn install(app: &tauri::App<MockRuntime>, updates: &Updates, version: &str) -> Result<(), Error> {
    tauri::async_runtime::block_on(updates.install(app.handle(), version)).map(|_| ())
}

fn reason(err: &Error) -> &str {
    err.details["reason"].as_str().unwrap()
}

#[test]
fn a_newer_build_signed_with_the_apps_key_replaces_the_apps_file() {
    let (app, server, key, dir) = (
        app(),
        ReleaseServer::start(),
        ReleaseKey::new(),
        tempfile::tempdir().unwrap(),
    );
    let exe = installed(dir.path());
    let new = build("0.2.0");
    server.serve("/corral-0.2.0", new.clone());
    let signature = key.sign(&new, "0.2.0");
    server.serve(
        "/latest.json",
        manifest(&server, "0.2.0", "/corral-0.2.0", &signature),
    );
    let updates = updates(&server, &key, &exe);

    let offer = tauri::async_runtime::block_on(updates.check(app.handle()))
        .unwrap()
        .unwrap();
    assert_eq!(
        (
            offer.version.as_str(),
            offer.current_version.as_str(),
            offer.notes.as_deref()
        ),
        ("0.2.0", "0.1.0", Some("What changed"))
    );
    let done = tauri::async_runtime::block_on(updates.install(app.handle(), "0.2.0")).unwrap();
    assert_eq!(done.version, "0.2.0");
    assert_eq!(done.path, exe.display().to_string());

    assert_eq!(
        std::fs::read(&exe).unwrap(),
        new,
        "the new build is in place"
    );
    let mode = std::fs::metadata(&exe).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o755, "still executable");
    assert!(std::process::Command::new(&exe).status().unwrap().success());
    assert_eq!(
        server.requests(),
        ["/latest.json", "/latest.json", "/corral-0.2.0"]
    );
}

#[test]
fn a_changed_build_is_refused_and_the_apps_file_is_left_as_it_was() {
    let (app, server, key, dir) = (
        app(),
        ReleaseServer::start(),
        ReleaseKey::new(),
        tempfile::tempdir().unwrap(),
    );
    let exe = installed(dir.path());
    let before = std::fs::read(&exe).unwrap();
    let new = build("0.2.0");
    let signature = key.sign(&new, "0.2.0");
    let mut tampered = new.clone();
    let last = tampered.len() - 1;
    tampered[last] ^= 1;
    server.serve("/corral-0.2.0", tampered);
    server.serve(
        "/latest.json",
        manifest(&server, "0.2.0", "/corral-0.2.0", &signature),
    );

    let err = install(&app, &updates(&server, &key, &exe), "0.2.0").unwrap_err();
    assert_eq!(err.code.as_str(), "update");
    assert_eq!(reason(&err), "signature");
    assert!(!err.retryable);
    assert!(
        err.message
            .starts_with("The downloaded build does not match its signature, so it was refused"),
        "{}",
        err.message
    );
    assert!(
        err.hint.starts_with("Nothing was installed."),
        "{}",
        err.hint
    );
    assert_eq!(err.details["version"], "0.2.0");
    assert_eq!(
        std::fs::read(&exe).unwrap(),
        before,
        "the app's file is untouched"
    );
    assert!(server.requests().contains(&"/corral-0.2.0".to_string()));
}

#[test]
fn a_build_signed_with_another_key_is_refused() {
    let (app, server, key, dir) = (
        app(),
        ReleaseServer::start(),
        ReleaseKey::new(),
        tempfile::tempdir().unwrap(),
    );
    let exe = installed(dir.path());
    let before = std::fs::read(&exe).unwrap();
    let new = build("0.2.0");
    server.serve("/corral-0.2.0", new.clone());
    let forged = ReleaseKey::new().sign(&new, "0.2.0");
    server.serve(
        "/latest.json",
        manifest(&server, "0.2.0", "/corral-0.2.0", &forged),
    );

    let err = install(&app, &updates(&server, &key, &exe), "0.2.0").unwrap_err();
    assert_eq!((err.code.as_str(), reason(&err)), ("update", "signature"));
    assert_eq!(std::fs::read(&exe).unwrap(), before);
}

#[test]
fn a_manifest_that_pairs_a_signed_build_with_another_version_is_refused() {
    let (app, server, key, dir) = (
        app(),
        ReleaseServer::start(),
        ReleaseKey::new(),
        tempfile::tempdir().unwrap(),
    );
    let exe = installed(dir.path());
    let before = std::fs::read(&exe).unwrap();
    // A genuine build of 0.2.0, announced as 9.0.0 so it looks newest.
    let old = build("0.2.0");
    server.serve("/corral-0.2.0", old.clone());
    let signature = key.sign(&old, "0.2.0");
    server.serve(
        "/latest.json",
        manifest(&server, "9.0.0", "/corral-0.2.0", &signature),
    );

    let err = install(&app, &updates(&server, &key, &exe), "9.0.0").unwrap_err();
    assert_eq!((err.code.as_str(), reason(&err)), ("update", "signature"));
    assert!(
        err.message.contains("signed for version 0.2.0"),
        "{}",
        err.message
    );
    assert_eq!(std::fs::read(&exe).unwrap(), before);
}

#[test]
fn an_install_owned_by_a_package_manager_fetches_nothing() {
    let (app, server, key, dir) = (
        app(),
        ReleaseServer::start(),
        ReleaseKey::new(),
        tempfile::tempdir().unwrap(),
    );
    let exe = installed(dir.path());
    let marker = dir.path().join("prefix").join(PACKAGE_MARKER);
    std::fs::create_dir_all(marker.parent().unwrap()).unwrap();
    std::fs::write(&marker, b"").unwrap();
    let new = build("0.2.0");
    server.serve("/corral-0.2.0", new.clone());
    let signature = key.sign(&new, "0.2.0");
    server.serve(
        "/latest.json",
        manifest(&server, "0.2.0", "/corral-0.2.0", &signature),
    );
    let updates = updates(&server, &key, &exe);

    let status = updates.status(app.handle());
    assert_eq!(
        status.install,
        Install::Package {
            marker: marker.display().to_string()
        }
    );
    let err = tauri::async_runtime::block_on(updates.check(app.handle())).unwrap_err();
    assert_eq!(
        (err.code.as_str(), reason(&err)),
        ("update", "package_manager")
    );
    assert!(err.hint.contains("sudo apt upgrade corral"), "{}", err.hint);
    let err = install(&app, &updates, "0.2.0").unwrap_err();
    assert_eq!(reason(&err), "package_manager");
    assert_eq!(
        server.requests(),
        Vec::<String>::new(),
        "nothing was fetched"
    );
    assert_ne!(std::fs::read(&exe).unwrap(), new);
}

#[test]
fn with_the_switch_off_nothing_is_fetched() {
    let (app, server, key, dir) = (
        app(),
        ReleaseServer::start(),
        ReleaseKey::new(),
        tempfile::tempdir().unwrap(),
    );
    let exe = installed(dir.path());
    let mut updates = updates(&server, &key, &exe);
    updates.settings.check = false;

    let err = tauri::async_runtime::block_on(updates.check(app.handle())).unwrap_err();
    assert_eq!((err.code.as_str(), reason(&err)), ("update", "off"));
    assert_eq!(server.requests(), Vec::<String>::new());
}
