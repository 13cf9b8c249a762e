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
use std::ffi::OsStr;
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
        match package_marker(executable) {
            Some(marker) if marker.is_file() => Install::Package {
                marker: marker.display().to_string(),
            },
            _ => Install::File {
                path: executable.display().to_string(),
            },
        }
    }

    /// How the app described by `running` was installed. In order:
    ///
    /// 1. the package marker under the running binary's prefix: the
    ///    package manager's, whatever `$APPIMAGE` says;
    /// 2. `$APPIMAGE`, only when it names a regular file and the running
    ///    binary lies beneath `$APPDIR`, the mount the AppImage runtime
    ///    made for it: the AppImage is the file to replace;
    /// 3. else the running binary itself.
    ///
    /// AppImage runtimes export both variables to every process they
    /// start, so a terminal opened by another AppImage hands its
    /// `$APPIMAGE` to whatever runs from it: the variable alone never
    /// makes that other file Corral's.
    pub fn decide(running: &Running) -> Install {
        if let Some(marker) = &running.package_marker {
            return Install::Package {
                marker: marker.display().to_string(),
            };
        }
        if let (Some(appimage), Some(appdir)) = (&running.appimage, &running.appdir) {
            if running.appimage_is_file && runs_from(&running.executable, appdir) {
                return Install::File {
                    path: appimage.display().to_string(),
                };
            }
        }
        Install::File {
            path: running.executable.display().to_string(),
        }
    }

    /// The file an update would replace: none for a package's install.
    pub fn target(&self) -> Option<&Path> {
        match self {
            Install::File { path } => Some(Path::new(path)),
            Install::Package { .. } => None,
        }
    }
}

/// Where the package marker would be for the binary `executable`
/// (`PREFIX/bin/corral` gives `PREFIX/share/corral/package-managed`).
fn package_marker(executable: &Path) -> Option<PathBuf> {
    executable
        .parent()
        .and_then(Path::parent)
        .map(|prefix| prefix.join(PACKAGE_MARKER))
}

/// Whether `executable` lies strictly beneath the AppImage mount `appdir`.
/// Both are absolute and have their links resolved; a mount at `/` would
/// hold every binary, so it holds none.
fn runs_from(executable: &Path, appdir: &Path) -> bool {
    appdir.is_absolute()
        && appdir.parent().is_some()
        && executable != appdir
        && executable.starts_with(appdir)
}

/// What decides how the running app was installed ([`Install::decide`]),
/// read from the process and the filesystem by [`Running::read`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Running {
    /// The running binary, links resolved.
    pub executable: PathBuf,
    /// The package marker under the binary's prefix, when it is a file.
    pub package_marker: Option<PathBuf>,
    /// `$APPIMAGE`, links resolved when it exists.
    pub appimage: Option<PathBuf>,
    /// Whether `appimage` is an existing regular file.
    pub appimage_is_file: bool,
    /// `$APPDIR`, links resolved; none when it does not exist.
    pub appdir: Option<PathBuf>,
}

impl Running {
    /// This process: its binary, `$APPIMAGE` and `$APPDIR`.
    pub fn this_process() -> Result<Running, Error> {
        let executable = std::env::current_exe()
            .map_err(|e| failure("install", format!("The app's own file is unknown: {e}.")))?;
        Ok(Running::read(
            &executable,
            std::env::var_os("APPIMAGE").as_deref(),
            std::env::var_os("APPDIR").as_deref(),
        ))
    }

    /// The facts about the binary `executable` run with these values of
    /// `$APPIMAGE` and `$APPDIR`, looked up on the filesystem. An empty
    /// variable counts as unset.
    pub fn read(executable: &Path, appimage: Option<&OsStr>, appdir: Option<&OsStr>) -> Running {
        // The kernel's path of a binary replaced while it runs (an
        // upgrade) ends in " (deleted)" and resolves to nothing: it is
        // kept as it is, its folder still leads to the marker.
        let executable = executable
            .canonicalize()
            .unwrap_or_else(|_| executable.to_path_buf());
        let set = |v: Option<&OsStr>| v.filter(|v| !v.is_empty()).map(PathBuf::from);
        let appimage = set(appimage).map(|a| a.canonicalize().unwrap_or(a));
        let appimage_is_file = appimage
            .as_deref()
            .and_then(|a| std::fs::metadata(a).ok())
            .is_some_and(|m| m.is_file());
        let appdir = set(appdir).and_then(|d| d.canonicalize().ok());
        Running {
            package_marker: package_marker(&executable).filter(|m| m.is_file()),
            executable,
            appimage,
            appimage_is_file,
            appdir,
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A process whose binary is `exe`, with these facts.
    fn running(
        exe: &str,
        marker: Option<&str>,
        appimage: Option<&str>,
        appimage_is_file: bool,
        appdir: Option<&str>,
    ) -> Running {
        Running {
            executable: PathBuf::from(exe),
            package_marker: marker.map(PathBuf::from),
            appimage: appimage.map(PathBuf::from),
            appimage_is_file,
            appdir: appdir.map(PathBuf::from),
        }
    }

    fn file(path: &str) -> Install {
        Install::File {
            path: path.to_string(),
        }
    }

    const OTHER: &str = "/home/u/Apps/Other.AppImage";
    const OTHER_MOUNT: &str = "/tmp/.mount_OtherXy";

    #[test]
    fn another_apps_appimage_variable_does_not_make_a_package_install_an_appimage() {
        // A .deb's binary started from a terminal another AppImage opened.
        let install = Install::decide(&running(
            "/usr/bin/corral",
            Some("/usr/share/corral/package-managed"),
            Some(OTHER),
            true,
            Some(OTHER_MOUNT),
        ));
        assert_eq!(
            install,
            Install::Package {
                marker: "/usr/share/corral/package-managed".into()
            }
        );
        assert_eq!(install.target(), None, "nothing is replaced");
    }

    #[test]
    fn a_bare_binary_run_under_another_appimage_replaces_only_itself() {
        let install = Install::decide(&running(
            "/home/u/bin/corral",
            None,
            Some(OTHER),
            true,
            Some(OTHER_MOUNT),
        ));
        assert_eq!(install, file("/home/u/bin/corral"));
        assert_ne!(install.target(), Some(Path::new(OTHER)));
    }

    #[test]
    fn a_package_marker_beside_the_binary_wins_over_a_consistent_appimage() {
        let install = Install::decide(&running(
            "/tmp/.mount_CorralAb/usr/bin/corral",
            Some("/tmp/.mount_CorralAb/usr/share/corral/package-managed"),
            Some("/home/u/Apps/Corral.AppImage"),
            true,
            Some("/tmp/.mount_CorralAb"),
        ));
        assert_eq!(
            install,
            Install::Package {
                marker: "/tmp/.mount_CorralAb/usr/share/corral/package-managed".into()
            }
        );
        assert_eq!(install.target(), None);
    }

    #[test]
    fn a_genuine_appimage_is_updated_at_its_appimage() {
        let install = Install::decide(&running(
            "/tmp/.mount_CorralAb/usr/bin/corral",
            None,
            Some("/home/u/Apps/Corral.AppImage"),
            true,
            Some("/tmp/.mount_CorralAb"),
        ));
        assert_eq!(install, file("/home/u/Apps/Corral.AppImage"));
        assert_eq!(
            install.target(),
            Some(Path::new("/home/u/Apps/Corral.AppImage"))
        );
    }

    #[test]
    fn the_appimage_is_trusted_only_as_a_file_with_the_binary_beneath_its_mount() {
        let exe = "/tmp/.mount_CorralAb/usr/bin/corral";
        let appimage = Some("/home/u/Apps/Corral.AppImage");
        let mount = Some("/tmp/.mount_CorralAb");
        for (why, running) in [
            ("not a file", running(exe, None, appimage, false, mount)),
            ("no APPDIR", running(exe, None, appimage, true, None)),
            ("no APPIMAGE", running(exe, None, None, false, mount)),
            (
                "a mount whose name begins the binary's folder's",
                running(exe, None, appimage, true, Some("/tmp/.mount_Corral")),
            ),
            (
                "a mount at /",
                running(exe, None, appimage, true, Some("/")),
            ),
            (
                "a relative mount",
                running(exe, None, appimage, true, Some("tmp/.mount_CorralAb")),
            ),
            (
                "the binary is the mount",
                running(exe, None, appimage, true, Some(exe)),
            ),
        ] {
            assert_eq!(Install::decide(&running), file(exe), "{why}");
        }
    }

    #[test]
    fn on_disk_appimage_is_trusted_only_from_inside_its_mount_and_the_marker_first() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let put = |rel: &str| {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, b"x").unwrap();
            path
        };
        let mount = root.join(".mount_CorralAb");
        let mounted = put(".mount_CorralAb/usr/bin/corral");
        let appimage = put("Apps/Corral.AppImage");
        let other = put("Apps/Other.AppImage");
        let other_mount = root.join(".mount_OtherXy");
        std::fs::create_dir_all(other_mount.join("usr/bin")).unwrap();
        let deb = put("usr/bin/corral");
        let deb_marker = put(&format!("usr/{PACKAGE_MARKER}"));
        let bare = put("bin/corral");
        let decide = |exe: &Path, appimage: Option<&Path>, appdir: Option<&Path>| {
            Install::decide(&Running::read(
                exe,
                appimage.map(Path::as_os_str),
                appdir.map(Path::as_os_str),
            ))
        };
        let shown = |p: &Path| p.display().to_string();

        // (1) Another AppImage's variables, a package's binary: the package's.
        assert_eq!(
            decide(&deb, Some(&other), Some(&other_mount)),
            Install::Package {
                marker: shown(&deb_marker)
            }
        );
        // A bare binary under them: itself, never the other app's file.
        assert_eq!(
            decide(&bare, Some(&other), Some(&other_mount)),
            file(&shown(&bare))
        );
        // (3) The AppImage whose mount holds the binary: the AppImage.
        assert_eq!(
            decide(&mounted, Some(&appimage), Some(&mount)),
            file(&shown(&appimage))
        );
        // Links resolved on every side.
        let linked_mount = root.join("mount-link");
        std::os::unix::fs::symlink(&mount, &linked_mount).unwrap();
        let linked_appimage = root.join("Corral-link.AppImage");
        std::os::unix::fs::symlink(&appimage, &linked_appimage).unwrap();
        assert_eq!(
            decide(
                &linked_mount.join("usr/bin/corral"),
                Some(&linked_appimage),
                Some(&linked_mount)
            ),
            file(&shown(&appimage))
        );
        // APPIMAGE not a regular file, or missing; APPDIR missing or empty.
        let folder = root.join("Apps");
        let gone = root.join("gone");
        for (appimage, appdir) in [
            (folder.as_path(), mount.as_path()),
            (gone.as_path(), mount.as_path()),
            (appimage.as_path(), gone.as_path()),
            (appimage.as_path(), Path::new("")),
        ] {
            assert_eq!(
                decide(&mounted, Some(appimage), Some(appdir)),
                file(&shown(&mounted)),
                "{appimage:?} {appdir:?}"
            );
        }
        // (2) A marker beside the mounted binary wins over it all.
        let marker = put(&format!(".mount_CorralAb/usr/{PACKAGE_MARKER}"));
        assert_eq!(
            decide(&mounted, Some(&appimage), Some(&mount)),
            Install::Package {
                marker: shown(&marker)
            }
        );
    }

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
