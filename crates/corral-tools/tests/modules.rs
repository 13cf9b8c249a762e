//! No module imports one that imports it back, in any crate of the
//! workspace: each crate's top-level modules form a graph without cycles,
//! read from the `crate::<module>` paths in their sources.

#![allow(clippy::unwrap_used, clippy::disallowed_methods)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

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

/// The top-level modules of the crate whose sources are in `src`, and the
/// modules each one names through `crate::`.
fn module_graph(src: &Path) -> Graph {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let module_of = |file: &Path| {
        let rel = file.strip_prefix(src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        first.trim_end_matches(".rs").to_string()
    };
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(f)).collect();
    let mut graph = Graph::new();
    for file in &files {
        let from = module_of(file);
        if from == "lib" || from == "main" {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        let edges = graph.entry(from.clone()).or_default();
        for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for (at, _) in line.match_indices("crate::") {
                let name: String = line[at + "crate::".len()..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if name != from && modules.contains(&name) {
                    edges.insert(name);
                }
            }
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
}

#[test]
fn no_crate_has_a_module_cycle() {
    let root = workspace();
    let mut crates: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path().join("src"))
        .collect();
    crates.push(root.join("src-tauri/src"));
    assert!(crates.len() >= 5, "{crates:?}");
    for src in crates {
        let graph = module_graph(&src);
        assert_eq!(find_cycle(&graph), None, "in {}", src.display());
    }
}
