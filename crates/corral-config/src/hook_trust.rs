//! Which texts of a project's settings files (`.claude/settings.json`,
//! `.claude/settings.local.json`) the user trusted to run their hooks,
//! kept in the app's config folder (never in the project, which the agent
//! and the project's authors can edit): `projects/<name>-<hash>-hooks.json`.
//! Trust is keyed on the exact text, kept whole (a settings file is
//! small): a change to a file is a text never trusted, so it asks again.

use super::{read_json, write_json, Store};
use corral_tools::Error;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct ProjectTrust {
    /// The project's folder, so the file says whose it is.
    #[serde(default)]
    root: String,
    /// Each settings file (relative to the project) and the text trusted.
    #[serde(default)]
    trusted: BTreeMap<String, String>,
}

impl Store {
    fn hook_trust_file(&self, root: &Path) -> PathBuf {
        self.config
            .join("projects")
            .join(format!("{}-hooks.json", super::project_file_stem(root)))
    }

    /// Whether the user trusted the hooks of `file` (relative to `root`)
    /// with exactly this text.
    pub fn hooks_trusted(&self, root: &Path, file: &str, text: &str) -> bool {
        let trust: ProjectTrust = read_json(&self.hook_trust_file(root)).unwrap_or_default();
        trust.trusted.get(file).is_some_and(|t| t == text)
    }

    /// Every settings file of `root` whose hooks the user trusted, with the
    /// text trusted: what a remote project's session is sent.
    pub fn trusted_hooks(&self, root: &Path) -> BTreeMap<String, String> {
        let trust: ProjectTrust = read_json(&self.hook_trust_file(root)).unwrap_or_default();
        trust.trusted
    }

    /// Trusts the hooks of `file` with this text (and no earlier one).
    pub fn trust_hooks(&self, root: &Path, file: &str, text: &str) -> Result<(), Error> {
        let path = self.hook_trust_file(root);
        let mut trust: ProjectTrust = read_json(&path).unwrap_or_default();
        trust.root = root.display().to_string();
        trust.trusted.insert(file.to_string(), text.to_string());
        write_json(&path, &trust, 0o600)
    }
}

#[cfg(test)]
mod tests {
    // Test fixtures in temporary folders, not a project's files.
    #![allow(clippy::disallowed_methods)]
    use super::super::tests::store;

    #[test]
    fn trust_is_per_project_and_file_and_lapses_when_the_text_changes() {
        let (dir, store) = store();
        let app = dir.path().join("app");
        let other = dir.path().join("other");
        std::fs::create_dir_all(&app).unwrap();
        let file = ".claude/settings.json";
        assert!(!store.hooks_trusted(&app, file, "{}"));
        store.trust_hooks(&app, file, "{}").unwrap();
        assert!(store.hooks_trusted(&app, file, "{}"));
        assert!(!store.hooks_trusted(&app, file, "{ }"));
        assert!(!store.hooks_trusted(&app, ".claude/settings.local.json", "{}"));
        assert!(!store.hooks_trusted(&other, file, "{}"));
        // Trusting the new text replaces the old one.
        store.trust_hooks(&app, file, "{\"hooks\":{}}").unwrap();
        assert!(!store.hooks_trusted(&app, file, "{}"));
        // Nothing was written into the project.
        assert_eq!(std::fs::read_dir(&app).unwrap().count(), 0);
    }
}
