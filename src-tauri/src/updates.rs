//! Updating the app itself, with Tauri's updater plugin.
//!
//! A static manifest (`latest.json`, at a URL from the settings or built
//! in) names the newest version, where its build is and the build's
//! minisign signature. A build is installed only when its signature
//! matches the release key compiled into this app, and only where the app
//! may replace its own file (a bare binary or an AppImage). An install made
//! by a `.deb` or `.rpm` is the package manager's to update: nothing is
//! fetched for it. Every refusal and failure is an `update` error whose
//! `details.reason` says which.

use crate::store::updates::UpdateSettings;
use corral_tools::{Error, ErrorCode};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tauri::{AppHandle, Manager, Runtime};
use tauri_plugin_updater::UpdaterExt;

/// The release key: base64 of the minisign public key file, as
/// `tauri signer generate` writes it. Set when a release is built; a build
/// without one cannot update itself.
pub const RELEASE_KEY: Option<&str> = option_env!("CORRAL_UPDATE_KEY");

/// The manifest releases are published at, set when a release is built.
pub const RELEASE_MANIFEST: Option<&str> = option_env!("CORRAL_UPDATE_MANIFEST");

/// The file the `.deb` and `.rpm` install to say a package manager owns
/// the app, relative to the prefix of `bin/corral` (`/usr`).
pub const PACKAGE_MARKER: &str = "share/corral/package-managed";

/// How long a check or a download may take.
const TIMEOUT: Duration = Duration::from_secs(120);

/// How Corral was installed, which decides who updates it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[ts(rename = "AppInstall")]
pub enum Install {
    /// A file the app replaces itself: its binary, or its AppImage.
    File { path: String },
    /// Installed by a package: the package manager updates it.
    Package { marker: String },
}

impl Install {
    /// The install of the app at `executable`: a package's when the
    /// package's marker file sits under the same prefix.
    pub fn of(executable: &Path) -> Install {
        let marker = executable
            .parent()
            .and_then(Path::parent)
            .map(|prefix| prefix.join(PACKAGE_MARKER));
        match marker {
            Some(marker) if marker.is_file() => Install::Package {
                marker: marker.display().to_string(),
            },
            _ => Install::File {
                path: executable.display().to_string(),
            },
        }
    }
}

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
    /// This app: the release key, and its AppImage or its own binary.
    pub fn for_this_app(settings: UpdateSettings) -> Result<Updates, Error> {
        let executable = match std::env::var_os("APPIMAGE") {
            Some(appimage) => PathBuf::from(appimage),
            None => std::env::current_exe()
                .map_err(|e| failure("install", format!("The app's own file is unknown: {e}.")))?,
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_package_marker_under_the_prefix_makes_the_install_the_package_managers() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("usr/bin");
        std::fs::create_dir_all(&bin).unwrap();
        let exe = bin.join("corral");
        std::fs::write(&exe, b"app").unwrap();
        assert_eq!(
            Install::of(&exe),
            Install::File {
                path: exe.display().to_string()
            }
        );
        let marker = dir.path().join("usr").join(PACKAGE_MARKER);
        std::fs::create_dir_all(marker.parent().unwrap()).unwrap();
        std::fs::write(&marker, b"").unwrap();
        assert_eq!(
            Install::of(&exe),
            Install::Package {
                marker: marker.display().to_string()
            }
        );
    }
}
