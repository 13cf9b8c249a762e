//! The languages Corral asks servers about, how a file's language is told
//! from its name, and which server programs speak for each.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

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
                        .filter(|path| is_executable(path))
                        .find_map(|path| behind_rustup(&path, program))
                        .map(|path| ServerSpec {
                            language,
                            program: path,
                            args: args.iter().map(|a| a.to_string()).collect(),
                        })
                })
            })
            .collect()
    }

    /// The servers for the project at `root`: [`ServerSpec::find`] in
    /// `dirs`, with TypeScript spoken by TypeScript 7's own server (`tsc
    /// --lsp --stdio`) where 7 is the TypeScript in use: the project's
    /// `node_modules/typescript` when it is 7.x (run by `node` from
    /// `dirs`: a program inside the project is never run itself), else a
    /// `tsc` of 7.x in `dirs` (npm's global one). typescript-language-server
    /// speaks for TypeScript 5 and older; it refuses 7, which has no
    /// `tsserver.js`.
    pub fn for_project(root: &Path, dirs: &[PathBuf]) -> Vec<ServerSpec> {
        let mut specs = ServerSpec::find(dirs);
        let project_ts = root.join("node_modules/typescript");
        let in_dirs = |name: &str| {
            dirs.iter()
                .map(|dir| dir.join(name))
                .find(|path| is_executable(path))
        };
        let seven = if typescript_major(&project_ts) == Some(7) {
            in_dirs("node").map(|node| ServerSpec {
                language: Language::TypeScript,
                program: node,
                args: vec![
                    project_ts.join("lib/tsc.js").display().to_string(),
                    "--lsp".into(),
                    "--stdio".into(),
                ],
            })
        } else if typescript_major(&project_ts).is_none() {
            // npm's global TypeScript: `tsc` links to its `bin/tsc`.
            in_dirs("tsc")
                .filter(|tsc| {
                    std::fs::canonicalize(tsc).ok().is_some_and(|real| {
                        real.parent()
                            .and_then(Path::parent)
                            .is_some_and(|package| typescript_major(package) == Some(7))
                    })
                })
                .map(|tsc| ServerSpec {
                    language: Language::TypeScript,
                    program: tsc,
                    args: vec!["--lsp".into(), "--stdio".into()],
                })
        } else {
            None
        };
        if let Some(seven) = seven {
            specs.retain(|s| s.language != Language::TypeScript);
            specs.push(seven);
        }
        specs
    }

    /// The program's file name, for messages.
    pub fn name(&self) -> String {
        self.program
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.program.display().to_string())
    }
}

/// The program itself, or for a rustup proxy (`~/.cargo/bin/rust-analyzer`
/// is one, installed whether or not the component is) the toolchain's
/// binary it runs; `None` when the proxy has nothing to run, so that a
/// missing server is reported as missing, not as one that dies at every
/// start. rustup is asked from `/` with auto-install off, so a project's
/// `rust-toolchain.toml` never makes it download anything.
fn behind_rustup(path: &Path, program: &str) -> Option<PathBuf> {
    let real = std::fs::canonicalize(path).ok()?;
    if real.file_name().is_none_or(|name| name != "rustup") {
        return Some(path.to_path_buf());
    }
    let output = std::process::Command::new(&real)
        .args(["which", program])
        .current_dir("/")
        .env("RUSTUP_AUTO_INSTALL", "0")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let found = PathBuf::from(String::from_utf8(output.stdout).ok()?.trim());
    (output.status.success() && found.is_absolute() && is_executable(&found)).then_some(found)
}

/// The major version of the TypeScript package at `package` (its
/// `package.json`), if it is one.
fn typescript_major(package: &Path) -> Option<u64> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    // Only its version is read, never shown: a small regular file, opened
    // without blocking (a FIFO in its place answers nothing).
    #[allow(clippy::disallowed_methods)]
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(package.join("package.json"))
        .ok()
        .filter(|f| f.metadata().is_ok_and(|m| m.is_file()))?;
    let mut text = String::new();
    file.take(1 << 16).read_to_string(&mut text).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    if json["name"] != "typescript" {
        return None;
    }
    json["version"].as_str()?.split('.').next()?.parse().ok()
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    // Test fixtures in temporary folders, not a project's files.
    #![allow(clippy::disallowed_methods)]
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

    /// TypeScript 7 is spoken by its own `tsc --lsp`: the project's when
    /// it has 7 (run by node), npm's global one otherwise; a project on 5
    /// keeps typescript-language-server.
    #[test]
    fn typescript_7_speaks_through_its_own_server() {
        use std::os::unix::fs::{symlink, PermissionsExt};
        let bin = tempfile::tempdir().unwrap();
        let executable = |path: &Path| {
            std::fs::write(path, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
        };
        executable(&bin.path().join("node"));
        executable(&bin.path().join("typescript-language-server"));
        let package = |dir: &Path, version: &str| {
            std::fs::create_dir_all(dir.join("bin")).unwrap();
            std::fs::create_dir_all(dir.join("lib")).unwrap();
            let json = format!(r#"{{"name": "typescript", "version": "{version}"}}"#);
            std::fs::write(dir.join("package.json"), json).unwrap();
            executable(&dir.join("bin/tsc"));
        };
        let dirs = [bin.path().to_path_buf()];
        let typescript = |root: &Path| {
            ServerSpec::for_project(root, &dirs)
                .into_iter()
                .find(|s| s.language == Language::TypeScript)
                .map(|s| (s.program, s.args))
        };

        let five = tempfile::tempdir().unwrap();
        package(&five.path().join("node_modules/typescript"), "5.9.3");
        assert_eq!(
            typescript(five.path()),
            Some((
                bin.path().join("typescript-language-server"),
                vec!["--stdio".into()]
            ))
        );

        let seven = tempfile::tempdir().unwrap();
        let own = seven.path().join("node_modules/typescript");
        package(&own, "7.0.2");
        assert_eq!(
            typescript(seven.path()),
            Some((
                bin.path().join("node"),
                vec![
                    own.join("lib/tsc.js").display().to_string(),
                    "--lsp".into(),
                    "--stdio".into()
                ]
            ))
        );

        // None in the project: npm's global TypeScript, if it is 7.
        let global = tempfile::tempdir().unwrap();
        package(&global.path().join("typescript"), "7.0.2");
        symlink(
            global.path().join("typescript/bin/tsc"),
            bin.path().join("tsc"),
        )
        .unwrap();
        let bare = tempfile::tempdir().unwrap();
        assert_eq!(
            typescript(bare.path()),
            Some((
                bin.path().join("tsc"),
                vec!["--lsp".into(), "--stdio".into()]
            ))
        );
    }

    /// `~/.cargo/bin/rust-analyzer` is a link to rustup: what it runs, or
    /// nothing when rustup has no rust-analyzer for the default toolchain.
    #[test]
    fn a_rustup_proxy_stands_for_its_toolchain_s_binary_or_for_none() {
        use std::os::unix::fs::{symlink, PermissionsExt};
        let dir = tempfile::tempdir().unwrap();
        let cargo_bin = dir.path().join("cargo/bin");
        let toolchain_bin = dir.path().join("toolchain/bin");
        std::fs::create_dir_all(&cargo_bin).unwrap();
        std::fs::create_dir_all(&toolchain_bin).unwrap();
        let real = toolchain_bin.join("rust-analyzer");
        let executable = |path: &Path, text: &str| {
            std::fs::write(path, text).unwrap();
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
        };
        executable(&real, "#!/bin/sh\n");
        symlink("rustup", cargo_bin.join("rust-analyzer")).unwrap();
        let rustup = |answer: &str| {
            executable(
                &cargo_bin.join("rustup"),
                &format!(
                    "#!/bin/sh\n[ \"$1 $2\" = \"which rust-analyzer\" ] || exit 2\n{answer}\n"
                ),
            )
        };

        rustup(&format!("echo {}", real.display()));
        let found = ServerSpec::find(std::slice::from_ref(&cargo_bin));
        assert_eq!(
            found,
            vec![ServerSpec {
                language: Language::Rust,
                program: real.clone(),
                args: vec![],
            }]
        );

        rustup("echo \"error: Unknown binary 'rust-analyzer'\" >&2; exit 1");
        assert_eq!(ServerSpec::find(&[cargo_bin]), vec![]);
    }
}
