//! Secret-like paths: the one rule, by name, that the policy asks before a
//! read, that search and the index leave out, and that the sandbox masks.

/// Extensions of source files, to which the word rules (secret, token,
/// credential, private_key) do not apply.
const SOURCE_EXTENSIONS: &[&str] = &[
    "rs", "ts", "tsx", "js", "jsx", "mjs", "cjs", "py", "go", "java", "kt", "c", "h", "cc", "cpp",
    "hpp", "cs", "rb", "php", "swift", "scala", "svelte", "vue",
];

/// Extensions of key stores, certificates with keys and infrastructure
/// state that holds secrets.
const SECRET_EXTENSIONS: &[&str] = &[
    "pem", "key", "p12", "pfx", "jks", "keystore", "ppk", "tfvars", "tfstate",
];

/// Files that hold credentials by convention.
const SECRET_NAMES: &[&str] = &[
    ".npmrc",
    ".pypirc",
    ".netrc",
    "_netrc",
    ".pgpass",
    ".my.cnf",
    ".htpasswd",
    ".git-credentials",
    "kubeconfig",
];

/// Secret-like names: `.env*` and `*.env`, key stores (`*.pem`, `*.key`,
/// `*.p12`, `*.pfx`, `*.jks`, `*.ppk`), Terraform state and variables,
/// credential files by convention (`.npmrc`, `.netrc`, `.pgpass`,
/// `kubeconfig`, `.kube/config`, `.docker/config.json`...), SSH keys, and names with
/// a word that is or ends in secret, token, credential, password or passwd (`api-token.txt`,
/// `apiToken.json`, `mysecret.txt`; plurals too), or `private_key`.
/// `tokenizer.rs`, `TokenStream.java` and `secretary.txt` are not secrets,
/// nor is any source file by a word of its name (`token.rs`).
pub fn is_secret_like(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    let ext = name.rsplit_once('.').map(|(_, ext)| ext);
    if name.starts_with(".env")
        || name.ends_with(".env")
        || ext.is_some_and(|ext| SECRET_EXTENSIONS.contains(&ext))
        || SECRET_NAMES.contains(&name)
        || ["id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"]
            .iter()
            .any(|k| name.starts_with(k))
        || lower.ends_with(".kube/config")
        || lower.ends_with(".docker/config.json")
    {
        return true;
    }
    // Source files are code, whatever their names say (`token.rs` in a
    // parser, `credentials.ts` in an auth module): the word rules would hide
    // them from search and make every read ask.
    let code = name
        .rsplit_once('.')
        .is_some_and(|(_, ext)| SOURCE_EXTENSIONS.contains(&ext));
    if code {
        return false;
    }
    if name.contains("private_key") || name.contains("private-key") {
        return true;
    }
    name.split(|c: char| !c.is_ascii_alphanumeric())
        .any(|word| {
            let word = word.strip_suffix('s').unwrap_or(word);
            ["secret", "token", "credential", "password", "passwd"]
                .iter()
                .any(|w| word.ends_with(w))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_match_words_not_substrings() {
        for yes in [
            ".env",
            "a/.env.prod",
            "key.pem",
            "tls.key",
            "id_ed25519",
            "api-token.txt",
            "client_secret.json",
            "credentials",
            "my_private_key.txt",
            "tokens.json",
            "apiToken.json",
            "accesstoken.json",
            "mysecret.txt",
            "GITHUB_TOKEN",
            "AwsCredentials.cfg",
            "prod.env",
            "cert.p12",
            "release.keystore",
            "infra/main.tfstate",
            "prod.tfvars",
            ".npmrc",
            "home/.netrc",
            ".pgpass",
            ".kube/config",
            ".docker/config.json",
            "kubeconfig",
            "passwords.txt",
            "db_password",
            "docs/secrets.md",
        ] {
            assert!(is_secret_like(yes), "{yes}");
        }
        for no in [
            "src/tokenizer.rs",
            "environment.md",
            "keyboard.ts",
            "secretary.txt",
            "README.md",
            "tokenize.py",
            "detokenizer.rs",
            "TokenStream.java",
            "syn/src/token.rs",
            "src/auth/credentials.ts",
            "cancellation_token.rs",
            "src/password.rs",
            "config/app.toml",
            "docker-compose.yml",
            "config.json",
        ] {
            assert!(!is_secret_like(no), "{no}");
        }
    }
}
