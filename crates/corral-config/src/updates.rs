//! Whether to check for updates and where, kept in the app's config folder
//! as `updates.json` (apart from the model settings: saving one never
//! rewrites the other).

use super::{read_json, write_json, Store};
use corral_tools::Error;
use serde::{Deserialize, Serialize};

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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

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
