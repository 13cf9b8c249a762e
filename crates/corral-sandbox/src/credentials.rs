//! Credentials in what git prints, masked before the model sees it:
//! `git remote -v` shows a token kept in a remote's URL
//! (`https://user:TOKEN@host/repo`), `git config --get-regexp http`
//! shows an `extraHeader` with an `Authorization:` value. The read-only
//! table runs such reads without asking, so their output never carries
//! the secret: the userinfo of every URL and the value of every
//! authorization header or `extraheader` is replaced by `***`.

use std::borrow::Cow;

/// What stands for a masked credential.
const MASK: &str = "***";

/// `text` with every credential masked; borrowed when there was none.
pub(crate) fn mask(text: &str) -> Cow<'_, str> {
    if !text.contains("://") && !has_header(text) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&mask_line(line));
    }
    if out == text {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(out)
    }
}

fn has_header(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.contains("authorization") || lower.contains("extraheader")
}

/// One line: a header's value first (it may hold a URL), then URLs.
fn mask_line(line: &str) -> String {
    let lower = line.to_ascii_lowercase();
    for key in ["authorization", "extraheader"] {
        if let Some(at) = lower.find(key) {
            // Keep the name and what separates it (`: `, ` = `, `=`).
            let rest = &line[at + key.len()..];
            let sep = rest
                .find(|c: char| !(c == ':' || c == '=' || c == ' ' || c == '\t'))
                .unwrap_or(rest.len());
            let separated = rest[..sep].contains([':', '=']);
            if separated && sep < rest.len() {
                return format!("{}{}{MASK}", &line[..at + key.len()], &rest[..sep]);
            }
        }
    }
    mask_urls(line)
}

/// Every `scheme://user:secret@host` with its userinfo masked.
fn mask_urls(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find("://") {
        let (before, after) = rest.split_at(at + 3);
        out.push_str(before);
        let end = after
            .find(|c: char| c == '/' || c == '?' || c == '#' || c.is_whitespace())
            .unwrap_or(after.len());
        let authority = &after[..end];
        match authority.rfind('@') {
            Some(userinfo) if userinfo > 0 => {
                out.push_str(MASK);
                out.push_str(&authority[userinfo..]);
            }
            _ => out.push_str(authority),
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_their_userinfo_and_headers_their_value() {
        let remote = "origin\thttps://x-access-token:ghp_SECRET123@example.com/o/r.git (fetch)\n\
                      up\tssh://git@example.com/o/r.git (push)\n\
                      plain\thttps://example.com/o/r.git (fetch)\n";
        let masked = mask(remote);
        assert!(!masked.contains("ghp_SECRET123"), "{masked}");
        assert!(
            masked.contains("https://***@example.com/o/r.git (fetch)"),
            "{masked}"
        );
        assert!(masked.contains("ssh://***@example.com/o/r.git"), "{masked}");
        assert!(
            masked.contains("plain\thttps://example.com/o/r.git"),
            "{masked}"
        );

        for header in [
            "http.https://example.com/.extraheader AUTHORIZATION: basic dXNlcjpTRUNSRVQ=",
            "http.extraHeader=Authorization: Bearer SECRET",
            "\textraheader = Authorization: token SECRET",
        ] {
            let masked = mask(header);
            assert!(
                !masked.contains("SECRET") && !masked.contains("dXNlcjpTRUNSRVQ"),
                "{masked}"
            );
            assert!(masked.ends_with(MASK), "{masked}");
        }
        // Prose that names the word is left alone.
        let prose = "abc123 Fix the authorization check\n";
        assert_eq!(mask(prose), prose);
        // Nothing to mask: the text itself.
        assert!(matches!(mask("a.txt | 2 +-\n"), Cow::Borrowed(_)));
        assert!(matches!(
            mask("see https://example.com/x\n"),
            Cow::Borrowed(_)
        ));
    }
}
