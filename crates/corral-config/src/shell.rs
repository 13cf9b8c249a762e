//! The user's programs and saved rules for the shell, kept in the app's
//! config folder (never in the project, which the agent can edit):
//! `shell.json` holds the programs added for every project,
//! `projects/<name>-<hash>.json` a project's own programs and its saved
//! rules.

use super::{read_json, write_json, Store};
use corral_tools::shell::{is_valid_program_name, SavedRule, ALLOWED_PROGRAMS};
use corral_tools::Error;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The programs added for every project.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct GlobalShell {
    #[serde(default)]
    programs: Vec<String>,
}

/// One project's programs and saved rules.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct ProjectShell {
    /// The project's folder, so the file says whose it is.
    #[serde(default)]
    root: String,
    #[serde(default)]
    programs: Vec<String>,
    #[serde(default)]
    rules: Vec<SavedRule>,
}

/// What Settings shows and edits: the built-in programs, the programs
/// added for every project and for the open one, and its saved rules.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct ShellConfig {
    pub builtin: Vec<String>,
    pub global_programs: Vec<String>,
    pub project_programs: Vec<String>,
    pub rules: Vec<SavedRule>,
}

impl Store {
    fn project_shell_file(&self, root: &Path) -> PathBuf {
        self.config
            .join("projects")
            .join(format!("{}.json", super::project_file_stem(root)))
    }

    fn project_shell(&self, root: &Path) -> ProjectShell {
        read_json(&self.project_shell_file(root)).unwrap_or_default()
    }

    fn save_project_shell(&self, root: &Path, mut shell: ProjectShell) -> Result<(), Error> {
        shell.root = root.display().to_string();
        write_json(&self.project_shell_file(root), &shell, 0o644)
    }

    /// The shell's settings, with the open project's part (`root`).
    pub fn shell_config(&self, root: Option<&Path>) -> ShellConfig {
        let global: GlobalShell = read_json(&self.config.join("shell.json")).unwrap_or_default();
        let project = root.map(|r| self.project_shell(r)).unwrap_or_default();
        ShellConfig {
            builtin: ALLOWED_PROGRAMS.iter().map(|p| p.to_string()).collect(),
            global_programs: global.programs,
            project_programs: project.programs,
            rules: project.rules,
        }
    }

    /// The programs a command in `root` may run beyond the built-in ones
    /// (every project's and its own), and its saved rules.
    pub fn shell_grants(&self, root: &Path) -> (Vec<String>, Vec<SavedRule>) {
        let config = self.shell_config(Some(root));
        let mut programs = config.global_programs;
        programs.extend(config.project_programs);
        (programs, config.rules)
    }

    /// Saves the programs added for every project and, with `root`, for
    /// that project. A name that is not a bare program name is refused.
    pub fn save_programs(
        &self,
        global: Vec<String>,
        project: Option<(&Path, Vec<String>)>,
    ) -> Result<(), Error> {
        let global = clean_programs(global)?;
        let project = match project {
            Some((root, programs)) => Some((root, clean_programs(programs)?)),
            None => None,
        };
        write_json(
            &self.config.join("shell.json"),
            &GlobalShell { programs: global },
            0o644,
        )?;
        if let Some((root, programs)) = project {
            let mut shell = self.project_shell(root);
            shell.programs = programs;
            self.save_project_shell(root, shell)?;
        }
        Ok(())
    }

    /// Saves a rule for `root` (once).
    pub fn add_rule(&self, root: &Path, rule: SavedRule) -> Result<(), Error> {
        let mut shell = self.project_shell(root);
        if !shell.rules.contains(&rule) {
            shell.rules.push(rule);
            self.save_project_shell(root, shell)?;
        }
        Ok(())
    }

    /// Removes a rule of `root`'s.
    pub fn remove_rule(&self, root: &Path, rule: &SavedRule) -> Result<(), Error> {
        let mut shell = self.project_shell(root);
        shell.rules.retain(|r| r != rule);
        self.save_project_shell(root, shell)
    }
}

/// Trimmed, without duplicates or built-in names; `invalid_input` naming
/// the first that is not a bare program name.
fn clean_programs(programs: Vec<String>) -> Result<Vec<String>, Error> {
    let mut out: Vec<String> = Vec::new();
    for program in programs {
        let program = program.trim().to_string();
        if program.is_empty() || ALLOWED_PROGRAMS.contains(&program.as_str()) {
            continue;
        }
        if !is_valid_program_name(&program) {
            return Err(Error::invalid_input(format!(
                "`{program}` is not a program name"
            ))
            .hint("Give the program's name only (`perl`, `deno`), not a path or a command line; it is looked up outside the project.")
            .detail("program", program));
        }
        if !out.contains(&program) {
            out.push(program);
        }
    }
    Ok(out)
}

/// A session judges calls in the mode Settings holds now, with the
/// programs and rules kept here.
impl corral_session::Settings for Store {
    fn mode(&self) -> corral_tools::policy::Mode {
        self.settings().mode
    }
    fn shell_grants(&self, root: &Path) -> (Vec<String>, Vec<SavedRule>) {
        Store::shell_grants(self, root)
    }
    fn save_rule(&self, root: &Path, rule: SavedRule) -> Result<(), Error> {
        self.add_rule(root, rule)
    }
    /// `$HOME`, where Claude Code keeps the user's own settings.
    fn home(&self) -> Option<std::path::PathBuf> {
        user_home()
    }
    fn hooks_trusted(&self, root: &Path, file: &str, text: &str) -> bool {
        Store::hooks_trusted(self, root, file, text)
    }
    fn trust_hooks(&self, root: &Path, file: &str, text: &str) -> Result<(), Error> {
        Store::trust_hooks(self, root, file, text)
    }
}

/// The user's home (`$HOME`, when it is an absolute path).
pub fn user_home() -> Option<std::path::PathBuf> {
    std::env::var_os("HOME")
        .map(std::path::PathBuf::from)
        .filter(|p| p.is_absolute())
}

#[cfg(test)]
mod tests {
    // Test fixtures in temporary folders, not a project's files.
    #![allow(clippy::disallowed_methods)]
    use super::super::tests::store;
    use super::*;

    #[test]
    fn programs_and_rules_are_kept_per_project_outside_it() {
        let (dir, store) = store();
        let app = dir.path().join("app");
        let other = dir.path().join("other");
        std::fs::create_dir_all(&app).unwrap();
        store
            .save_programs(
                vec!["perl".into(), " ruby ".into(), "git".into()],
                Some((&app, vec!["deno".into(), "deno".into()])),
            )
            .unwrap();
        store
            .add_rule(&app, SavedRule::parse("npm test").unwrap())
            .unwrap();
        store
            .add_rule(&app, SavedRule::parse("npm test").unwrap())
            .unwrap();
        let (programs, rules) = store.shell_grants(&app);
        assert_eq!(programs, vec!["perl", "ruby", "deno"]);
        assert_eq!(rules, vec![SavedRule::parse("npm test").unwrap()]);
        // Another project sees the global programs only, and no rules.
        let (programs, rules) = store.shell_grants(&other);
        assert_eq!(programs, vec!["perl", "ruby"]);
        assert!(rules.is_empty());
        // Nothing was written into the project.
        assert_eq!(std::fs::read_dir(&app).unwrap().count(), 0);
        store
            .remove_rule(&app, &SavedRule::parse("npm test").unwrap())
            .unwrap();
        assert!(store.shell_grants(&app).1.is_empty());
    }

    #[test]
    fn a_path_or_a_command_line_is_not_a_program() {
        let (dir, store) = store();
        for bad in ["/usr/bin/python3", "../x", "make -j", "a;b", "."] {
            let err = store.save_programs(vec![bad.into()], None).unwrap_err();
            assert_eq!(err.code, corral_tools::ErrorCode::InvalidInput, "{bad}");
        }
        assert!(!dir.path().join("config/shell.json").exists());
    }
}
