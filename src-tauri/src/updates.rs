//! Updating the app itself, with Tauri's updater plugin.
//!
//! A static manifest (`latest.json`, at a URL from the settings or built
//! in) names the newest version, where its build is and the build's
//! minisign signature. A build is installed only when its signature
//! matches the release key compiled into this app, and only where the app
//! may replace its own file (a bare binary or an AppImage). An install made
//! by a `.deb` or `.rpm` is the package manager's to update: nothing is
//! fetched for it (how the app was installed is decided by
//! [`Install::decide`], in corral-config). Every refusal and failure is an
//! `update` error whose `details.reason` says which.

use crate::store::updates::{Install, Running, UpdateSettings};
use corral_tools::{Error, ErrorCode};
use serde::Serialize;
use std::path::PathBuf;
use std::time::Duration;
use tauri::{AppHandle, Manager, Runtime};
use tauri_plugin_updater::UpdaterExt;

/// The release key: base64 of the minisign public key file, as
/// `tauri signer generate` writes it. Set when a release is built; a build
/// without one cannot update itself.
pub const RELEASE_KEY: Option<&str> = option_env!("CORRAL_UPDATE_KEY");

/// The manifest releases are published at, set when a release is built.
pub const RELEASE_MANIFEST: Option<&str> = option_env!("CORRAL_UPDATE_MANIFEST");

/// How long a check or a download may take.
const TIMEOUT: Duration = Duration::from_secs(120);

/// What Settings shows about updates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct UpdateStatus {
    pub settings: UpdateSettings,
    /// The running version.
    pub version: String,
    pub install: Install,
    /// Whether this build carries a release key (none: no update can be
    /// verified, so none is looked for).
    pub has_key: bool,
    /// The manifest a check fetches: the setting, else the built-in one.
    pub manifest_url: Option<String>,
}

/// A newer version the manifest offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct UpdateOffer {
    pub version: String,
    pub current_version: String,
    pub notes: Option<String>,
}

/// A version verified and written in place of the app's file; it runs
/// from the next start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct InstalledUpdate {
    pub version: String,
    pub path: String,
}

/// Adds the updater plugin. Its commands are not in the window's
/// capabilities: the window reaches updates only through Corral's own
/// commands, which check the switch and the install first.
pub fn register<R: Runtime>(builder: tauri::Builder<R>) -> tauri::Builder<R> {
    builder
        .plugin(tauri_plugin_updater::Builder::new().build())
        .manage(Registered)
}

/// Managed by [`register`]: without the plugin, its builder would panic.
struct Registered;

/// Everything a check or an install needs.
#[derive(Debug, Clone)]
pub struct Updates {
    pub settings: UpdateSettings,
    /// The public key signatures must match (base64 of the minisign file).
    pub key: Option<String>,
    /// The file an update replaces.
    pub executable: PathBuf,
}

impl Updates {
    /// This app: the release key, and the file [`Install::decide`] picks:
    /// its AppImage or its own binary (for a package's install, the
    /// binary, which [`Install::of`] finds the marker beside again).
    pub fn for_this_app(settings: UpdateSettings) -> Result<Updates, Error> {
        let running = Running::this_process()?;
        let executable = match Install::decide(&running).target() {
            Some(target) => target.to_path_buf(),
            None => running.executable,
        };
        Ok(Updates {
            settings,
            key: RELEASE_KEY.map(str::to_string),
            executable,
        })
    }

    /// What Settings shows.
    pub fn status<R: Runtime>(&self, app: &AppHandle<R>) -> UpdateStatus {
        UpdateStatus {
            settings: self.settings.clone(),
            version: app.package_info().version.to_string(),
            install: Install::of(&self.executable),
            has_key: self.key.is_some(),
            manifest_url: self.manifest_url().map(str::to_string),
        }
    }

    fn manifest_url(&self) -> Option<&str> {
        let url = self.settings.manifest_url.trim();
        if url.is_empty() {
            RELEASE_MANIFEST
        } else {
            Some(url)
        }
    }

    /// The newer version the manifest offers, if any.
    pub async fn check<R: Runtime>(
        &self,
        app: &AppHandle<R>,
    ) -> Result<Option<UpdateOffer>, Error> {
        let update = self
            .updater(app)?
            .check()
            .await
            .map_err(|e| map(e, "check"))?;
        Ok(update.map(|u| UpdateOffer {
            version: u.version,
            current_version: u.current_version,
            notes: u.body,
        }))
    }

    /// Downloads `version`, checks its signature and writes it in place of
    /// the app's file. A build whose signature does not match is refused
    /// and the file is left as it was.
    pub async fn install<R: Runtime>(
        &self,
        app: &AppHandle<R>,
        version: &str,
    ) -> Result<InstalledUpdate, Error> {
        let update = self
            .updater(app)?
            .check()
            .await
            .map_err(|e| map(e, "check"))?;
        let update = match update {
            Some(update) if update.version == version => update,
            Some(update) => {
                return Err(failure(
                    "changed",
                    format!("The manifest now offers Corral {}, not {version}.", update.version),
                )
                .hint("Check for updates again.")
                .detail("offered", update.version))
            }
            None => {
                return Err(failure(
                    "changed",
                    format!("The manifest no longer offers a version newer than this one, so {version} was not installed."),
                )
                .hint("Check for updates again."))
            }
        };
        update
            .download_and_install(|_, _| {}, || {})
            .await
            .map_err(|e| map(e, "install").detail("version", version))?;
        Ok(InstalledUpdate {
            version: update.version,
            path: self.executable.display().to_string(),
        })
    }

    /// The plugin's updater for this install, after the refusals that
    /// come before any request.
    fn updater<R: Runtime>(
        &self,
        app: &AppHandle<R>,
    ) -> Result<tauri_plugin_updater::Updater, Error> {
        if let Install::Package { marker } = Install::of(&self.executable) {
            return Err(failure(
                "package_manager",
                "Corral was installed by a package, so its package manager updates it.",
            )
            .hint("Update it as you installed it: `sudo apt upgrade corral` or `sudo dnf upgrade corral`.")
            .detail("marker", marker));
        }
        if !self.settings.check {
            return Err(failure("off", "Checking for updates is off.")
                .hint("Turn on \"Check for updates\" in Settings."));
        }
        let Some(key) = &self.key else {
            return Err(failure(
                "no_key",
                "This build of Corral carries no release key, so no update could be verified.",
            )
            .hint("Builds from source are updated by building them again (`git pull`, then `scripts/run.sh`)."));
        };
        let Some(manifest) = self.manifest_url() else {
            return Err(failure("manifest", "No update manifest is set.")
                .hint("Enter the release manifest's URL (`latest.json`) in Settings."));
        };
        let url = tauri::Url::parse(manifest).map_err(|e| {
            Error::invalid_input(format!(
                "The update manifest `{manifest}` is not a URL: {e}."
            ))
            .hint("Enter the manifest's full URL, starting with `https://`.")
        })?;
        if app.try_state::<Registered>().is_none() {
            return Err(failure("check", "The updater is not part of this app."));
        }
        app.updater_builder()
            .pubkey(key)
            .endpoints(vec![url])
            .and_then(|b| b.executable_path(&self.executable).timeout(TIMEOUT).build())
            .map_err(|e| map(e, "check"))
    }
}

/// An `update` error for `reason`, not retryable unless said otherwise.
fn failure(reason: &str, message: impl Into<String>) -> Error {
    Error::new(ErrorCode::Update, message)
        .detail("reason", reason)
        .retryable(false)
}

/// The plugin's error as an `update` error: a bad signature, a manifest
/// that cannot be read, the network, or the install (`phase`).
fn map(error: tauri_plugin_updater::Error, phase: &str) -> Error {
    use tauri_plugin_updater::Error as E;
    let said = error.to_string();
    match error {
        E::Minisign(_)
        | E::Base64(_)
        | E::SignatureUtf8(_)
        | E::SignedVersionMismatch { .. }
        | E::MissingSignedVersion => failure(
            "signature",
            format!("The downloaded build does not match its signature, so it was refused: {said}"),
        )
        .hint("Nothing was installed. The download or the manifest was changed after signing, or signed with another key: get Corral from its release page, or try again later."),
        E::Reqwest(_) | E::Network(_) => failure(
            "network",
            format!("The update server could not be reached: {said}"),
        )
        .hint("Check the manifest's URL in Settings and your connection, then try again.")
        .retryable(true),
        E::InsecureTransportProtocol => failure(
            "manifest",
            "The update manifest's URL is not https, and updates are fetched over https only.",
        )
        .hint("Enter the manifest's `https://` URL in Settings."),
        E::ReleaseNotFound
        | E::Serialization(_)
        | E::Semver(_)
        | E::UrlParse(_)
        | E::TargetNotFound(_)
        | E::TargetsNotFound(_)
        | E::EmptyEndpoints => failure(
            "manifest",
            format!("The update manifest could not be used: {said}"),
        )
        .hint("Check the manifest's URL in Settings; the manifest must name a version and a `linux-x86_64` (or your architecture's) build."),
        _ => failure(phase, format!("The update could not be {}: {said}", match phase {
            "install" => "installed",
            _ => "checked",
        })),
    }
}
