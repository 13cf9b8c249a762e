//! Whether to check for updates and where, kept in the app's config folder
//! as `updates.json` (apart from the model settings: saving one never
//! rewrites the other); and how the app was installed, which decides who
//! updates it and which file an update replaces (the app's updater, with
//! Tauri's plugin, acts on it).

use super::{read_json, write_json, Store};
use corral_tools::{Error, ErrorCode};
use serde::{Deserialize, Serialize};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// The user's choice about updates.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct UpdateSettings {
    /// Off until the user turns it on: a check is a request to the
    /// manifest's server, and Corral sends nothing anywhere unasked.
    #[serde(default)]
    pub check: bool,
    /// The release manifest (`latest.json`); empty for the one this build
    /// was made with (none in a build from source).
    #[serde(default)]
    pub manifest_url: String,
}

impl Store {
    fn updates_file(&self) -> std::path::PathBuf {
        self.config.join("updates.json")
    }

    /// The saved choice, or off with the built-in manifest.
    pub fn update_settings(&self) -> UpdateSettings {
        read_json(&self.updates_file()).unwrap_or_default()
    }

    /// Saves the choice (the URL is checked when it is used).
    pub fn save_update_settings(&self, settings: &UpdateSettings) -> Result<(), Error> {
        write_json(&self.updates_file(), settings, 0o644)
    }
}

/// The file the `.deb` and `.rpm` install to say a package manager owns
/// the app, relative to the prefix of `bin/corral` (`/usr`).
pub const PACKAGE_MARKER: &str = "share/corral/package-managed";

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
        let executable = std::env::current_exe().map_err(|e| {
            Error::new(
                ErrorCode::Update,
                format!("The app's own file is unknown: {e}."),
            )
            .detail("reason", "install")
            .retryable(false)
        })?;
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

#[cfg(test)]
mod tests {
    // Test fixtures in temporary folders, not a project's files.
    #![allow(clippy::unwrap_used, clippy::disallowed_methods)]
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

    #[test]
    fn updates_are_off_until_turned_on_and_the_choice_is_kept() {
        let (_dir, store) = super::super::tests::store();
        assert_eq!(store.update_settings(), UpdateSettings::default());
        assert!(!store.update_settings().check);
        let on = UpdateSettings {
            check: true,
            manifest_url: "https://example.org/corral/latest.json".into(),
        };
        store.save_update_settings(&on).unwrap();
        assert_eq!(store.update_settings(), on);
    }
}
