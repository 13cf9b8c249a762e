//! What an approved git sees of the user's git configuration
//! (`~/.gitconfig`, `~/.config/git/config`): a copy holding only the
//! sections that hold no secret by their nature (the name a commit is
//! made with, how git behaves), never `credential`, `url` (an
//! `insteadOf` may carry a token), `http` (an `extraHeader` may),
//! `sendemail`, an `include` of another file, nor any section a tool adds
//! (`github`, `hub`, `lfs`...). An allowlist: a section not named here is
//! left out.

/// The sections copied.
const SECTIONS: [&str; 26] = [
    "user",
    "author",
    "committer",
    "init",
    "core",
    "color",
    "column",
    "advice",
    "commit",
    "tag",
    "gpg",
    "pull",
    "push",
    "fetch",
    "branch",
    "merge",
    "rebase",
    "diff",
    "log",
    "format",
    "status",
    "rerere",
    "help",
    "i18n",
    "interactive",
    "safe",
];

/// `text` (a git configuration file) with only the lines of the sections
/// in [`SECTIONS`]. A line that continues the one before (a value ending
/// in `\`) stays with it.
pub(crate) fn shown(text: &str) -> String {
    let mut kept = String::new();
    let mut keeping = false;
    let mut continued = false;
    for line in text.lines() {
        let starts_section = !continued && line.trim_start().starts_with('[');
        if starts_section {
            keeping = section_of(line).is_some_and(|name| SECTIONS.contains(&name.as_str()));
        }
        if keeping {
            kept.push_str(line);
            kept.push('\n');
        }
        continued = line.trim_end().ends_with('\\');
    }
    kept
}

/// The section a header line opens, lowercased: `[user]`, `[url "..."]`,
/// `[branch.main]` are `user`, `url`, `branch`.
fn section_of(line: &str) -> Option<String> {
    let inner = line.trim_start().strip_prefix('[')?;
    let end = inner.find(|c: char| c == ']' || c == '"' || c == '.' || c.is_whitespace())?;
    let name = &inner[..end];
    (!name.is_empty()).then(|| name.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_allowed_sections_are_copied() {
        let text = "# mine\n[user]\n\tname = T\n\temail = t@t\n\
            [url \"https://TOKEN@example.invalid/\"]\n\tinsteadOf = https://example.invalid/\n\
            [http]\n\textraHeader = Authorization: TOKEN\n\
            [credential]\n\thelper = \"!f() { echo password=TOKEN; }; f\"\n\
            [Core]\n\teditor = vim\n\
            [include]\n\tpath = ~/.secret-gitconfig\n\
            [github] user = me\n\ttoken = TOKEN\n\
            [branch \"main\"]\n\trebase = true\n\
            [sendemail]\n\tsmtpPass = TOKEN \\\n[user] still the password\n\
            [init] defaultBranch = main\n";
        let shown = shown(text);
        assert!(!shown.contains("TOKEN"), "{shown}");
        assert!(!shown.contains("secret-gitconfig"), "{shown}");
        assert!(!shown.contains("still the password"), "{shown}");
        for kept in [
            "name = T",
            "editor = vim",
            "rebase = true",
            "defaultBranch = main",
        ] {
            assert!(shown.contains(kept), "{kept}: {shown}");
        }
    }
}
