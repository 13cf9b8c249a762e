//! Updates through the real updater plugin: a release server on 127.0.0.1
//! serves the manifest and the builds, with keys made for each test (none
//! is committed; the testkit's `Release`). A newer build signed with the
//! app's key replaces the app's file; a changed build, a build signed with
//! another key, or a manifest that pairs a build with another version is
//! refused and leaves the file as it was; an install owned by a package
//! manager, or the switch off, fetches nothing at all.

use corral_app::store::updates::{Install, UpdateSettings, PACKAGE_MARKER};
use corral_app::updates::Updates;
use corral_testkit::release::{build, Release, ReleaseKey};
use corral_tools::Error;
use std::os::unix::fs::PermissionsExt;
use tauri::test::{mock_builder, mock_context, noop_assets, MockRuntime};

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

/// The app's updater, pointed at `release` and trusting its key.
fn updates(release: &Release) -> Updates {
    Updates {
        settings: UpdateSettings {
            check: true,
            manifest_url: release.manifest_url(),
        },
        key: Some(release.key.public()),
        executable: release.exe.clone(),
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
    let (app, release) = (app(), Release::new());
    let new = release.publish("0.2.0");
    let updates = updates(&release);

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
    assert_eq!(done.path, release.exe.display().to_string());

    assert_eq!(
        std::fs::read(&release.exe).unwrap(),
        new,
        "the new build is in place"
    );
    let mode = std::fs::metadata(&release.exe)
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755, "still executable");
    assert!(std::process::Command::new(&release.exe)
        .status()
        .unwrap()
        .success());
    assert_eq!(
        release.requests(),
        ["/latest.json", "/latest.json", "/corral-0.2.0"]
    );
}

#[test]
fn a_changed_build_is_refused_and_the_apps_file_is_left_as_it_was() {
    let (app, release) = (app(), Release::new());
    let before = std::fs::read(&release.exe).unwrap();
    let mut tampered = release.publish("0.2.0");
    let last = tampered.len() - 1;
    tampered[last] ^= 1;
    release.serve("/corral-0.2.0", tampered);

    let err = install(&app, &updates(&release), "0.2.0").unwrap_err();
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
        std::fs::read(&release.exe).unwrap(),
        before,
        "the app's file is untouched"
    );
    assert!(release.requests().contains(&"/corral-0.2.0".to_string()));
}

#[test]
fn a_build_signed_with_another_key_is_refused() {
    let (app, release) = (app(), Release::new());
    let before = std::fs::read(&release.exe).unwrap();
    let new = build("0.2.0");
    release.serve("/corral-0.2.0", new.clone());
    let forged = ReleaseKey::new().sign(&new, "0.2.0");
    release.announce("0.2.0", "/corral-0.2.0", &forged);

    let err = install(&app, &updates(&release), "0.2.0").unwrap_err();
    assert_eq!((err.code.as_str(), reason(&err)), ("update", "signature"));
    assert_eq!(std::fs::read(&release.exe).unwrap(), before);
}

#[test]
fn a_manifest_that_pairs_a_signed_build_with_another_version_is_refused() {
    let (app, release) = (app(), Release::new());
    let before = std::fs::read(&release.exe).unwrap();
    // A genuine build of 0.2.0, announced as 9.0.0 so it looks newest.
    let old = build("0.2.0");
    release.serve("/corral-0.2.0", old.clone());
    release.announce("9.0.0", "/corral-0.2.0", &release.key.sign(&old, "0.2.0"));

    let err = install(&app, &updates(&release), "9.0.0").unwrap_err();
    assert_eq!((err.code.as_str(), reason(&err)), ("update", "signature"));
    assert!(
        err.message.contains("signed for version 0.2.0"),
        "{}",
        err.message
    );
    assert_eq!(std::fs::read(&release.exe).unwrap(), before);
}

#[test]
fn an_install_owned_by_a_package_manager_fetches_nothing() {
    let (app, release) = (app(), Release::new());
    let marker = release.dir.path().join("prefix").join(PACKAGE_MARKER);
    std::fs::create_dir_all(marker.parent().unwrap()).unwrap();
    std::fs::write(&marker, b"").unwrap();
    let new = release.publish("0.2.0");
    let updates = updates(&release);

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
        release.requests(),
        Vec::<String>::new(),
        "nothing was fetched"
    );
    assert_ne!(std::fs::read(&release.exe).unwrap(), new);
}

#[test]
fn with_the_switch_off_nothing_is_fetched() {
    let (app, release) = (app(), Release::new());
    let mut updates = updates(&release);
    updates.settings.check = false;

    let err = tauri::async_runtime::block_on(updates.check(app.handle())).unwrap_err();
    assert_eq!((err.code.as_str(), reason(&err)), ("update", "off"));
    assert_eq!(release.requests(), Vec::<String>::new());
}
