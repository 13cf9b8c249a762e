//! Corral's task image with a given corral-cli, made for a test by
//! `scripts/image.sh` (Podman, mmdebstrap: `scripts/setup.sh --test`
//! installs both) and removed when dropped; and the engine's running
//! containers by name.
//!
//! Shared by path (`#[path]`) with corral-cli's suite, which does not
//! depend on the kit. So it uses nothing but std.

use std::path::Path;
use std::process::Command;

/// The image, by its tag.
pub struct TaskImage(pub String);

impl TaskImage {
    /// Makes the image with `cli` as its corral-cli, tagged for the test
    /// (`localhost/corral-task:<label>-<pid>-<n>`: tests running side by
    /// side in one process each have their own, and remove only theirs).
    pub fn build(cli: &Path, label: &str) -> TaskImage {
        static MADE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = MADE.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let podman = Command::new("podman").arg("--version").output();
        assert!(
            podman.is_ok_and(|o| o.status.success()),
            "podman is missing: run `scripts/setup.sh --test`"
        );
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let tag = format!("localhost/corral-task:{label}-{}-{n}", std::process::id());
        let out = Command::new(repo.join("scripts/image.sh"))
            .arg("--cli")
            .arg(cli)
            .args(["--tag", &tag])
            .output()
            .expect("scripts/image.sh runs");
        assert!(
            out.status.success(),
            "scripts/image.sh: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        TaskImage(tag)
    }
}

impl Drop for TaskImage {
    fn drop(&mut self) {
        let _ = Command::new("podman")
            .args(["rmi", "--force", &self.0])
            .output();
    }
}

/// The running containers whose name starts with `prefix`.
pub fn running(prefix: &str) -> Vec<String> {
    let out = Command::new("podman")
        .args(["ps", "--format", "{{.Names}}"])
        .output()
        .expect("podman runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|name| name.starts_with(prefix))
        .map(str::to_string)
        .collect()
}
