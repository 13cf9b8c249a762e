//! The languages Corral asks servers about, how a file's language is told
//! from its name, and which server programs speak for each.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A language with a server Corral knows how to start.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
    ts_rs::TS,
)]
#[serde(rename_all = "snake_case")]
pub enum Language {
    Rust,
    TypeScript,
    Python,
    Go,
    C,
}

/// The file extensions of each language (JavaScript goes to the
/// TypeScript server, C++ to clangd).
const EXTENSIONS: &[(Language, &[&str])] = &[
    (Language::Rust, &["rs"]),
    (
        Language::TypeScript,
        &["ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs"],
    ),
    (Language::Python, &["py", "pyi"]),
    (Language::Go, &["go"]),
    (
        Language::C,
        &["c", "h", "cc", "cpp", "cxx", "hh", "hpp", "hxx"],
    ),
];

/// The server programs of each language, the preferred first, with the
/// arguments that make them speak over stdio.
const SERVERS: &[(Language, &str, &[&str])] = &[
    (Language::Rust, "rust-analyzer", &[]),
    (
        Language::TypeScript,
        "typescript-language-server",
        &["--stdio"],
    ),
    (Language::Python, "basedpyright-langserver", &["--stdio"]),
    (Language::Python, "pyright-langserver", &["--stdio"]),
    (Language::Go, "gopls", &[]),
    (Language::C, "clangd", &[]),
];

impl Language {
    /// Every language, in a fixed order.
    pub const ALL: [Language; 5] = [
        Language::Rust,
        Language::TypeScript,
        Language::Python,
        Language::Go,
        Language::C,
    ];

    /// The language of a file, from its extension; `None` for a file no
    /// server is asked about (Markdown, JSON...).
    pub fn of_path(path: &str) -> Option<Language> {
        let name = path.rsplit('/').next().unwrap_or(path);
        let (_, ext) = name.rsplit_once('.')?;
        let ext = ext.to_ascii_lowercase();
        EXTENSIONS
            .iter()
            .find(|(_, exts)| exts.contains(&ext.as_str()))
            .map(|(language, _)| *language)
    }

    /// The name people know it by.
    pub fn label(self) -> &'static str {
        match self {
            Language::Rust => "Rust",
            Language::TypeScript => "TypeScript",
            Language::Python => "Python",
            Language::Go => "Go",
            Language::C => "C/C++",
        }
    }

    /// The `languageId` of a document, as the protocol names it.
    pub(crate) fn id_of(self, path: &str) -> &'static str {
        let ext = path.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
        match (self, ext) {
            (Language::Rust, _) => "rust",
            (Language::TypeScript, "tsx") => "typescriptreact",
            (Language::TypeScript, "jsx") => "javascriptreact",
            (Language::TypeScript, "js" | "mjs" | "cjs") => "javascript",
            (Language::TypeScript, _) => "typescript",
            (Language::Python, _) => "python",
            (Language::Go, _) => "go",
            (Language::C, "c" | "h") => "c",
            (Language::C, _) => "cpp",
        }
    }

    /// The server programs that speak for it, preferred first, with their
    /// arguments.
    pub fn programs(self) -> impl Iterator<Item = (&'static str, &'static [&'static str])> {
        SERVERS
            .iter()
            .filter(move |(language, _, _)| *language == self)
            .map(|(_, program, args)| (*program, *args))
    }
}

/// One server to start: its language, the executable (an absolute path)
/// and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    pub language: Language,
    pub program: PathBuf,
    pub args: Vec<String>,
}

impl ServerSpec {
    /// The first server of each language found in `dirs`, in order: what
    /// is present on the machine.
    pub fn find(dirs: &[PathBuf]) -> Vec<ServerSpec> {
        Language::ALL
            .iter()
            .filter_map(|&language| {
                language.programs().find_map(|(program, args)| {
                    dirs.iter()
                        .map(|dir| dir.join(program))
                        .find(|path| is_executable(path))
                        .map(|path| ServerSpec {
                            language,
                            program: path,
                            args: args.iter().map(|a| a.to_string()).collect(),
                        })
                })
            })
            .collect()
    }

    /// The program's file name, for messages.
    pub fn name(&self) -> String {
        self.program
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.program.display().to_string())
    }
}

fn is_executable(path: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_s_language_comes_from_its_extension() {
        let cases = [
            ("src/main.rs", Some(Language::Rust)),
            ("ui/App.TSX", Some(Language::TypeScript)),
            ("a/b.mjs", Some(Language::TypeScript)),
            ("tool.py", Some(Language::Python)),
            ("cmd/x.go", Some(Language::Go)),
            ("lib/x.hpp", Some(Language::C)),
            ("README.md", None),
            ("Makefile", None),
            (".rs/notes", None),
        ];
        for (path, want) in cases {
            assert_eq!(Language::of_path(path), want, "{path}");
        }
    }

    #[test]
    fn the_first_server_found_speaks_for_its_language() {
        let dir = tempfile::tempdir().unwrap();
        let make = |name: &str, mode: u32| {
            use std::os::unix::fs::PermissionsExt;
            let path = dir.path().join(name);
            std::fs::write(&path, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        make("pyright-langserver", 0o755);
        make("basedpyright-langserver", 0o755);
        make("gopls", 0o644);
        let found = ServerSpec::find(&[dir.path().to_path_buf()]);
        assert_eq!(
            found,
            vec![ServerSpec {
                language: Language::Python,
                program: dir.path().join("basedpyright-langserver"),
                args: vec!["--stdio".into()],
            }]
        );
    }
}
