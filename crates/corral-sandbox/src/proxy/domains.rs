//! The domains a command with the network may reach without asking: the
//! package registries the ecosystems' tools install and fetch from, and
//! the code hosts git fetches from. Everything else is refused, or asked
//! about when the caller can ask ([`super::Egress::ask`]).

/// The default allowlist, by ecosystem (docs/security.md shows it). A
/// name matches itself only; `*.name` matches any name below `name`.
pub const DEFAULT_DOMAINS: &[(&str, &[&str])] = &[
    (
        "Rust (cargo, rustup)",
        &[
            "crates.io",
            "index.crates.io",
            "static.crates.io",
            "static.rust-lang.org",
        ],
    ),
    (
        "JavaScript (npm, yarn, pnpm, bun, node-gyp)",
        &[
            "registry.npmjs.org",
            "registry.yarnpkg.com",
            "repo.yarnpkg.com",
            "nodejs.org",
        ],
    ),
    ("Python (pip, uv)", &["pypi.org", "files.pythonhosted.org"]),
    ("Go modules", &["proxy.golang.org", "sum.golang.org"]),
    (
        "Ruby (gem, bundler)",
        &["rubygems.org", "index.rubygems.org"],
    ),
    (
        "git hosts",
        &[
            "github.com",
            "codeload.github.com",
            "objects.githubusercontent.com",
            "gitlab.com",
            "bitbucket.org",
        ],
    ),
];

/// The normal form of a host name: lowercase, without a trailing dot.
pub(crate) fn normal(host: &str) -> String {
    host.trim_end_matches('.').to_ascii_lowercase()
}

/// Whether `pattern` (a name, or `*.name`) is a domain pattern the
/// allowlist accepts: labels of letters, digits and hyphens, at least two
/// of them (a bare `com` or `*` would allow too much).
pub fn is_valid_pattern(pattern: &str) -> bool {
    let name = pattern.strip_prefix("*.").unwrap_or(pattern);
    let labels: Vec<&str> = name.split('.').collect();
    labels.len() >= 2
        && labels.iter().all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        })
        && !labels.iter().all(|l| l.chars().all(|c| c.is_ascii_digit()))
}

/// Whether `host` (already [`normal`]) matches `pattern`.
fn matches(pattern: &str, host: &str) -> bool {
    let pattern = normal(pattern);
    match pattern.strip_prefix("*.") {
        Some(parent) => host
            .strip_suffix(parent)
            .is_some_and(|below| below.ends_with('.') && below.len() > 1),
        None => host == pattern,
    }
}

/// Whether `host` is on the default allowlist or on `extra` (the user's).
pub(crate) fn allowed(host: &str, extra: &[String]) -> bool {
    let host = normal(host);
    DEFAULT_DOMAINS
        .iter()
        .flat_map(|(_, names)| names.iter())
        .any(|p| matches(p, &host))
        || extra.iter().any(|p| matches(p, &host))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_and_the_users_domains_are_allowed_and_nothing_else() {
        let extra = vec!["example.org".to_string(), "*.internal.test".to_string()];
        for host in [
            "registry.npmjs.org",
            "REGISTRY.NPMJS.ORG.",
            "index.crates.io",
            "github.com",
            "example.org",
            "a.internal.test",
            "a.b.internal.test",
        ] {
            assert!(allowed(host, &extra), "{host}");
        }
        for host in [
            "evil.com",
            "npmjs.org.evil.com",
            "evilgithub.com",
            "x.github.com",
            "www.example.org",
            "internal.test",
            "xinternal.test",
            "127.0.0.1",
            "",
        ] {
            assert!(!allowed(host, &extra), "{host}");
        }
    }

    #[test]
    #[allow(clippy::disallowed_methods)]
    fn the_security_doc_shows_the_default_allowlist_as_it_is() {
        let doc = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/security.md"),
        )
        .unwrap();
        let rows: Vec<&str> = doc
            .lines()
            .skip_while(|l| !l.starts_with("| ecosystem | domains allowed by default |"))
            .skip(2)
            .take_while(|l| l.starts_with('|'))
            .collect();
        let expected: Vec<String> = DEFAULT_DOMAINS
            .iter()
            .map(|(ecosystem, names)| {
                let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
                format!("| {ecosystem} | {} |", names.join(", "))
            })
            .collect();
        assert_eq!(rows, expected);
        for (_, names) in DEFAULT_DOMAINS {
            assert!(names.iter().all(|n| is_valid_pattern(n)), "{names:?}");
        }
    }

    #[test]
    fn only_real_domain_patterns_are_accepted() {
        for good in ["example.org", "*.example.org", "a-b.c1.dev"] {
            assert!(is_valid_pattern(good), "{good}");
        }
        for bad in [
            "", "*", "*.com", "com", "-a.com", "a-.com", "a..com", "1.2.3.4", "a b.com", "a.com/x",
            "a.com:80", "*.*.com",
        ] {
            assert!(!is_valid_pattern(bad), "{bad}");
        }
    }
}
