//! Saved rules: "always allow" a program with an argv prefix (`npm test`,
//! `cargo test`, `pytest -q`) in one project. The caller keeps them (the
//! app in its config folder, the CLI from `--rule`), never the project.
//!
//! A rule only turns an `ask` into an `allow`; it never covers a call that
//! names a secret-like file or a path outside the project (by its text or
//! where a link leads), nor one that needs the network, and it never
//! changes the profile the call runs in.

use super::rules::{leads_outside, named_secret, CommandLine};
use super::{network, ExecShellInput};
use corral_fs::ProjectRoot;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A program and the arguments every covered call starts with.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
pub struct SavedRule {
    pub program: String,
    #[serde(default)]
    pub args: Vec<String>,
}

impl SavedRule {
    /// A rule from its text, words split on whitespace (`"npm test"`).
    /// `None` for an empty text.
    pub fn parse(text: &str) -> Option<SavedRule> {
        let mut words = text.split_whitespace().map(str::to_string);
        let program = words.next()?;
        Some(SavedRule {
            program,
            args: words.collect(),
        })
    }

    /// The rule "always allow" on a call proposes: the program and its
    /// leading words (letters, digits, `-_+@` only) up to the first that is
    /// a path, an option value, a `--`, or past two (`npm test -- x` →
    /// `npm test`, `pytest -q tests/a.py` → `pytest -q`, `cargo test --lib`
    /// → `cargo test --lib`). The approval shows it from the call's ticket.
    pub fn proposed(input: &ExecShellInput) -> SavedRule {
        let args = input
            .args
            .iter()
            .take_while(|a| {
                !a.is_empty()
                    && a.as_str() != "--"
                    && a.chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '+' | '@'))
            })
            .take(2)
            .cloned()
            .collect();
        SavedRule {
            program: input.command.clone(),
            args,
        }
    }

    /// Whether the call's argv starts with this rule's.
    fn prefixes(&self, input: &ExecShellInput) -> bool {
        self.program == input.command && input.args.starts_with(&self.args)
    }
}

impl fmt::Display for SavedRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.program)?;
        for arg in &self.args {
            write!(f, " {arg}")?;
        }
        Ok(())
    }
}

/// The first rule that lets this call run without asking, if any. None
/// covers a call naming a secret-like file or a path outside the project,
/// or one that fetches from the network.
pub fn rule_covering<'a>(
    root: &ProjectRoot,
    line: &CommandLine<'_>,
    rules: &'a [SavedRule],
) -> Option<&'a SavedRule> {
    let input = line.input();
    let rule = rules.iter().find(|rule| rule.prefixes(input))?;
    let outside = input
        .args
        .iter()
        .any(|arg| parts(arg).any(|part| leads_outside(root, part)));
    let secret = named_secret(root, line).is_some();
    let network = network::wants_network(line);
    (!outside && !secret && !network).then_some(rule)
}

/// What an argument may name as a path: itself, and what follows `=` or
/// `:` (`--config=../x`, `HEAD:../x`), and a short option's attached value.
fn parts(arg: &str) -> impl Iterator<Item = &str> {
    let short = (arg.starts_with('-') && !arg.starts_with("--"))
        .then(|| arg.get(2..))
        .flatten()
        .filter(|v| !v.is_empty());
    std::iter::once(arg)
        .chain(arg.split(['=', ':']).skip(1))
        .chain(short)
        .filter(|part| !part.is_empty())
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;

    fn call(command: &str, args: &[&str]) -> ExecShellInput {
        ExecShellInput {
            command: command.into(),
            args: args.iter().map(|a| a.to_string()).collect(),
            timeout_secs: None,
            background: false,
        }
    }

    #[test]
    fn proposed_rules_stop_at_paths_values_and_double_dash() {
        let shown = |c, a: &[&str]| SavedRule::proposed(&call(c, a)).to_string();
        assert_eq!(shown("npm", &["test", "--", "--config", "x"]), "npm test");
        assert_eq!(shown("pytest", &["-q", "tests/a.py"]), "pytest -q");
        assert_eq!(shown("cargo", &["test", "--lib", "x"]), "cargo test --lib");
        assert_eq!(shown("make", &[]), "make");
        assert_eq!(shown("cargo", &["test", "--features=x"]), "cargo test");
        // Hidden and bidi characters never reach the label the window shows.
        assert_eq!(shown("npm", &["te\u{202E}st", "x"]), "npm");
        assert_eq!(shown("npm", &["a b"]), "npm");
    }

    #[test]
    fn rules_cover_prefixes_but_not_paths_outside_secrets_or_the_network() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".env"), "K=1").unwrap();
        let root = ProjectRoot::open(dir.path()).unwrap();
        let rules = vec![
            SavedRule::parse("npm test").unwrap(),
            SavedRule::parse("npm").unwrap(),
        ];
        let covered =
            |c, a: &[&str]| rule_covering(&root, &CommandLine::read(&call(c, a)), &rules).is_some();
        assert!(covered("npm", &["test"]));
        assert!(covered("npm", &["test", "--", "--watch=false"]));
        assert!(!covered("npx", &["test"]));
        assert!(!covered("npm", &["test", "--", "--config", "../x"]));
        assert!(!covered("npm", &["test", "--", "--config=../x"]));
        assert!(!covered("npm", &["test", "/etc/passwd"]));
        assert!(!covered("npm", &["test", "-c/etc/x"]));
        assert!(!covered("npm", &["test", ".env"]));
        assert!(!covered("npm", &["test", "--env-file=.env"]));
        assert!(!covered("npm", &["install"]));
        assert!(!covered("npm", &["ci"]));
        std::os::unix::fs::symlink("/etc", dir.path().join("out")).unwrap();
        assert!(!covered("npm", &["test", "out/x"]));
    }
}
