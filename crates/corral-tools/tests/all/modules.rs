//! No module imports one that imports it back, in any crate of the
//! workspace: at every level (a crate's top-level modules, the submodules
//! of `store` or `shell`, ...) the modules under one parent form a graph
//! without cycles, read from the `crate::` and `super::` paths in their
//! sources. A file that names a module elsewhere is an edge between the two
//! siblings that contain them: `store::history` naming
//! `crate::store::markdown::render` is the edge `store::history` ->
//! `store::markdown`; `shell::process` naming `crate::policy` is `shell` ->
//! `policy`. A module naming its own parent or child is no edge.
//!
//! No crate depends on one that depends on it back, counting dev- and
//! build-dependencies too (cargo refuses a cycle of normal dependencies
//! only), and the layers hold: the disk layer (corral-fs) knows only the
//! wire error, the tool layer knows no session, and no crate depends on
//! the app.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module (`a::b`) -> the sibling modules it names.
type Graph = BTreeMap<String, BTreeSet<String>>;

/// A module's path from the crate root: `["store", "history"]`.
type ModulePath = Vec<String>;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module a source file is: `store/history.rs` and `store/history/mod.rs`
/// are `store::history`; `lib.rs` and `main.rs` are the root.
fn module_of(src: &Path, file: &Path) -> ModulePath {
    let mut parts: ModulePath = file
        .strip_prefix(src)
        .unwrap()
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main") {
        parts.clear();
    }
    if parts.last().is_some_and(|last| last == "mod") {
        parts.pop();
    }
    parts
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn skip_space(text: &[char], mut at: usize) -> usize {
    while at < text.len() && text[at].is_whitespace() {
        at += 1;
    }
    at
}

/// Reads the path at `at` (after `crate::` or `super::`), appending each
/// full path it names to `out`: `a::b::{c, d::e}` names `base::a::b::c` and
/// `base::a::b::d::e`. Returns where the path ends.
fn read_path(
    text: &[char],
    mut at: usize,
    mut base: ModulePath,
    out: &mut Vec<ModulePath>,
) -> usize {
    loop {
        at = skip_space(text, at);
        if text.get(at) == Some(&'{') {
            at += 1;
            loop {
                at = skip_space(text, at);
                match text.get(at) {
                    None => return at,
                    Some('}') => return at + 1,
                    Some(_) => {}
                }
                at = read_path(text, at, base.clone(), out);
                // Past `as Alias` to the next item.
                while at < text.len() && text[at] != ',' && text[at] != '}' {
                    at += 1;
                }
                if text.get(at) == Some(&',') {
                    at += 1;
                }
            }
        }
        let word: String = text[at..].iter().take_while(|c| is_word(**c)).collect();
        if word.is_empty() {
            out.push(base);
            return at;
        }
        at += word.chars().count();
        base.push(word);
        if text.get(at) == Some(&':') && text.get(at + 1) == Some(&':') {
            at += 2;
        } else {
            out.push(base);
            return at;
        }
    }
}

/// Every module path a file's code names through `crate::` or `super::`
/// (comment lines left out).
fn named_paths(text: &str, module: &[String]) -> Vec<ModulePath> {
    let code: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let text: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut at = 0;
    while at < text.len() {
        if at > 0 && is_word(text[at - 1]) {
            at += 1;
            continue;
        }
        let rest = |prefix: &str| {
            text[at..]
                .iter()
                .take(prefix.len())
                .copied()
                .eq(prefix.chars())
        };
        if rest("crate::") {
            at = read_path(&text, at + "crate::".len(), Vec::new(), &mut out);
        } else if rest("super::") {
            let mut base = module.to_vec();
            while text[at..].iter().take(7).copied().eq("super::".chars()) {
                base.pop();
                at += "super::".len();
            }
            at = read_path(&text, at, base, &mut out);
        } else {
            at += 1;
        }
    }
    out
}

/// For every level of the crate whose sources are in `src`, the modules
/// under one parent and the siblings each one names.
fn module_graph(src: &Path) -> Graph {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeSet<ModulePath> = files.iter().map(|f| module_of(src, f)).collect();
    let mut graph = Graph::new();
    for file in &files {
        let from = module_of(src, file);
        if !from.is_empty() {
            graph.entry(from.join("::")).or_default();
        }
        let text = std::fs::read_to_string(file).unwrap();
        for path in named_paths(&text, &from) {
            // The module named: the longest prefix of the path that is one.
            let Some(to) = (0..=path.len())
                .rev()
                .map(|n| &path[..n])
                .find(|prefix| modules.contains(*prefix))
            else {
                continue;
            };
            let common = from.iter().zip(to).take_while(|(a, b)| a == b).count();
            if common == from.len() || common == to.len() {
                continue; // itself, its parent or its child
            }
            graph
                .entry(from[..=common].join("::"))
                .or_default()
                .insert(to[..=common].join("::"));
        }
    }
    graph
}

/// The first cycle found, as the modules around it, or `None`.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &Graph,
        done: &mut BTreeSet<String>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if done.contains(node) {
            return None;
        }
        if let Some(at) = stack.iter().position(|n| n == node) {
            let mut cycle = stack[at..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        stack.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, done, stack) {
                return Some(cycle);
            }
        }
        stack.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut done, &mut Vec::new()))
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn the_checker_finds_a_cycle() {
    let graph: Graph = [("a", "b"), ("b", "c"), ("c", "a"), ("d", "a")]
        .into_iter()
        .map(|(from, to)| (from.to_string(), BTreeSet::from([to.to_string()])))
        .collect();
    assert_eq!(find_cycle(&graph).unwrap(), ["a", "b", "c", "a"]);
    let mut acyclic = graph;
    acyclic.insert("c".into(), BTreeSet::new());
    assert_eq!(find_cycle(&acyclic), None);
}

#[test]
fn the_graph_is_read_from_the_sources() {
    let graph = module_graph(&workspace().join("crates/corral-tools/src"));
    assert!(graph["dispatch"].contains("policy"), "{graph:?}");
    assert!(graph["tools"].contains("tool"), "{graph:?}");
    // A submodule naming another crate-level module is its parent's edge.
    assert!(graph["tools"].contains("policy"), "{graph:?}");
    let sandbox = module_graph(&workspace().join("crates/corral-sandbox/src"));
    // `super::capture::{Capture, Captured}` and `super::sandbox::{self, ..}`.
    assert!(sandbox["process"].contains("capture"), "{sandbox:?}");
    assert!(sandbox["process"].contains("sandbox"), "{sandbox:?}");
    // `super::super::forward::splice` in `proxy::http`.
    assert!(sandbox["proxy"].contains("forward"), "{sandbox:?}");
    let app = module_graph(&workspace().join("src-tauri/src"));
    assert!(app["commands"].contains("state"), "{app:?}");
}

/// Writes `files` (path, text) under a fresh `src` folder.
fn write_crate(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

#[test]
fn a_cycle_between_sibling_submodules_is_found() {
    let dir = write_crate(&[
        ("lib.rs", "mod store;\nmod view;\n"),
        (
            "store/mod.rs",
            "pub mod history;\npub mod markdown;\nuse history::X;\n",
        ),
        (
            "store/history.rs",
            "pub struct X;\nfn f() { crate::store::markdown::render(); }\n",
        ),
        (
            "store/markdown.rs",
            "use crate::store::{\n    history::X,\n};\npub fn render() {}\n",
        ),
        ("view.rs", "use crate::store::history::X;\n"),
    ]);
    let graph = module_graph(dir.path());
    assert_eq!(
        find_cycle(&graph).unwrap(),
        ["store::history", "store::markdown", "store::history"],
        "{graph:?}"
    );
    assert_eq!(graph["view"], BTreeSet::from(["store".to_string()]));

    // The same through `super::`, and with the cycle broken.
    let dir = write_crate(&[
        ("store/mod.rs", "pub mod history;\npub mod markdown;\n"),
        ("store/history.rs", "use super::markdown::render;\n"),
        ("store/markdown.rs", "use super::{history as h};\n"),
    ]);
    assert!(find_cycle(&module_graph(dir.path())).is_some());
    std::fs::write(dir.path().join("store/markdown.rs"), "use super::*;\n").unwrap();
    assert_eq!(find_cycle(&module_graph(dir.path())), None);
}

#[test]
fn no_crate_has_a_module_cycle() {
    let root = workspace();
    // Each folder of crates/ is a crate (crates/README.md is not).
    let mut crates: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|path| path.is_dir())
        .map(|path| path.join("src"))
        .collect();
    crates.push(root.join("src-tauri/src"));
    assert!(crates.len() >= 5, "{crates:?}");
    for src in crates {
        let graph = module_graph(&src);
        assert_eq!(find_cycle(&graph), None, "in {}", src.display());
    }
}

/// A crate's name and the names it depends on (normal, dev and build;
/// a renamed dependency by its package), read from its manifest.
fn manifest_edges(manifest: &str) -> (String, BTreeSet<String>) {
    let (mut name, mut deps) = (String::new(), BTreeSet::new());
    let mut section = String::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line.trim_matches(|c| c == '[' || c == ']').to_string();
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim();
        if section == "package" && key == "name" {
            name = value.trim().trim_matches('"').to_string();
        } else if section.ends_with("dependencies") {
            let package = value
                .split_once("package")
                .and_then(|(_, rest)| rest.split('"').nth(1));
            let dep = package.unwrap_or_else(|| key.split('.').next().unwrap_or(key));
            deps.insert(dep.to_string());
        }
    }
    (name, deps)
}

/// The workspace's crates, each with the workspace crates it depends on.
fn crate_graph(manifests: &[PathBuf]) -> Graph {
    let edges: Vec<_> = manifests
        .iter()
        .map(|m| manifest_edges(&std::fs::read_to_string(m).unwrap()))
        .collect();
    let ours: BTreeSet<String> = edges.iter().map(|(name, _)| name.clone()).collect();
    edges
        .into_iter()
        .map(|(name, deps)| (name, deps.intersection(&ours).cloned().collect()))
        .collect()
}

fn workspace_manifests() -> Vec<PathBuf> {
    let root = workspace();
    let mut manifests: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|path| path.is_dir())
        .map(|path| path.join("Cargo.toml"))
        .collect();
    manifests.push(root.join("src-tauri/Cargo.toml"));
    manifests
}

#[test]
fn no_crate_depends_on_one_that_depends_on_it_back() {
    let graph = crate_graph(&workspace_manifests());
    assert!(graph.len() >= 7, "{graph:?}");
    assert!(graph["corral"].contains("corral-session"), "{graph:?}");
    assert_eq!(find_cycle(&graph), None, "{graph:?}");
    // The layers: tools below the session, the app above everything.
    assert!(
        !graph["corral-tools"].contains("corral-session"),
        "{graph:?}"
    );
    // The sandbox below the tools: it knows no tool, policy or session.
    assert!(
        graph["corral-tools"].contains("corral-sandbox"),
        "{graph:?}"
    );
    for layer in ["corral-tools", "corral-session"] {
        assert!(!graph["corral-sandbox"].contains(layer), "{graph:?}");
    }
    for (name, deps) in &graph {
        assert!(!deps.contains("corral"), "{name} depends on the app");
    }
    // Every host is an adapter of the session: the app, the CLI, the MCP
    // server.
    for host in ["corral", "corral-cli", "corral-mcp"] {
        assert!(graph[host].contains("corral-session"), "{graph:?}");
    }
    // The disk layer is a leaf over the wire error: every domain crate
    // builds on it, and it on none of them.
    let protocol: BTreeSet<String> = ["corral-protocol".to_string()].into();
    assert_eq!(graph["corral-fs"], protocol, "{graph:?}");
    // The domains over it know no tool layer: it is their user.
    for domain in ["corral-checkpoint", "corral-search"] {
        assert!(graph[domain].contains("corral-fs"), "{graph:?}");
        assert!(!graph[domain].contains("corral-tools"), "{graph:?}");
        assert!(graph["corral-tools"].contains(domain), "{graph:?}");
    }
}

#[test]
fn a_crate_cycle_through_dev_dependencies_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let a = write(
        "a.toml",
        "[package]\nname = \"a\"\n\n[dependencies]\nb.workspace = true\nserde = \"1\"\n",
    );
    let b = write(
        "b.toml",
        "[package]\nname = \"b\"\n\n[dev-dependencies]\nrenamed = { package = \"a\", path = \"../a\" }\n",
    );
    let graph = crate_graph(&[a.clone(), b]);
    assert_eq!(find_cycle(&graph).unwrap(), ["a", "b", "a"], "{graph:?}");
    let b = write("b.toml", "[package]\nname = \"b\"\n");
    assert_eq!(find_cycle(&crate_graph(&[a, b])), None);
}
