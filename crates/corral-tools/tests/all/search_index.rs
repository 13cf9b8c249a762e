//! The trigram index never changes what `search_files` returns: for random
//! small trees and random queries (literal, regex, case-insensitive, with
//! globs and paths), the indexed search and the plain one agree, also after
//! random edits, creations, deletions and renames made without a rebuild.
//! Plus the index's own promises: damaged or foreign indexes are rebuilt,
//! patterns without trigrams scan, the output says which.

use corral_tools::dispatch::{self, CallContext};
use corral_tools::policy::{Approval, Mode};
use corral_tools::search::{self, IndexConfig, LiveIndex, SearchFilesInput, SearchFilesOutput};
use corral_tools::ProjectRoot;
use proptest::prelude::*;
use serde_json::json;
use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

/// Short enough for the tests, long enough to exceed a clock tick.
const SETTLE: Duration = Duration::from_millis(40);

const NAMES: &[&str] = &[
    "a.txt",
    "b.rs",
    "sub/c.txt",
    "sub/d.rs",
    "sub/deep/e.md",
    "other/f.txt",
    ".hidden.txt",
    "skip.log",
    "server.key",
    "made/g.txt",
    "made/inner/h.rs",
];

/// Folders moved and removed whole, and where they go.
const FOLDERS: &[&str] = &["sub", "other", "made", "moved", "other/inside"];

/// What `.gitignore` may become.
const IGNORES: &[&str] = &["*.log\n", "*.log\nsub/\n", "*.rs\n", ""];

const LINES: &[&str] = &[
    "foo",
    "Foo bar",
    "FOO",
    "barx and bazx",
    "kit",
    "\u{212A}IT",
    "naïve café",
    "fn read_utf8_lossy(x)",
    "fn lossy",
    "a.b(c)",
    "",
    "ab",
    "tab\there",
    "ſtop STOP",
];

/// (query, regex)
const PATTERNS: &[(&str, bool)] = &[
    ("foo", false),
    ("Foo", false),
    ("bar", true),
    ("ba[rz]x", true),
    ("(foo|barx)", true),
    ("fo+", true),
    ("f.o", true),
    (".", true),
    ("kit", false),
    ("naïve", false),
    (r"fn [a-z_]+_utf8_lossy\(", true),
    ("^foo$", true),
    (r"\bbar", true),
    ("o b", false),
    ("a.b(", false),
    ("stop", false),
    (r"caf\w", true),
    ("zzz", false),
    ("x)$", true),
];

fn content() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::collection::vec(0..LINES.len(), 0..10),
        any::<bool>(),
        prop::bool::weighted(0.1),
    )
        .prop_map(|(lines, crlf, nul)| {
            let end = if crlf { "\r\n" } else { "\n" };
            let mut text = String::new();
            for i in lines {
                text.push_str(LINES[i]);
                text.push_str(end);
            }
            let mut bytes = text.into_bytes();
            if nul {
                bytes.extend_from_slice(b"bin\0foo\n");
            }
            bytes
        })
}

#[derive(Debug, Clone)]
enum Op {
    Write(usize, Vec<u8>),
    Delete(usize),
    Rename(usize, usize),
    MoveFolder(usize, usize),
    RemoveFolder(usize),
    Ignore(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..NAMES.len(), content()).prop_map(|(f, c)| Op::Write(f, c)),
        2 => (0..NAMES.len()).prop_map(Op::Delete),
        2 => (0..NAMES.len(), 0..NAMES.len()).prop_map(|(a, b)| Op::Rename(a, b)),
        1 => (0..FOLDERS.len(), 0..FOLDERS.len()).prop_map(|(a, b)| Op::MoveFolder(a, b)),
        1 => (0..FOLDERS.len()).prop_map(Op::RemoveFolder),
        1 => (0..IGNORES.len()).prop_map(Op::Ignore),
    ]
}

fn query() -> impl Strategy<Value = SearchFilesInput> {
    (
        prop_oneof![
            (0..PATTERNS.len()).prop_map(|i| (PATTERNS[i].0.to_string(), PATTERNS[i].1)),
            // A literal cut from the file contents.
            (0..LINES.len(), 0usize..12, 1usize..8).prop_map(|(l, from, len)| {
                let chars: Vec<char> = LINES[l].chars().collect();
                let from = from.min(chars.len());
                let to = (from + len).min(chars.len());
                let s: String = chars[from..to].iter().collect();
                (if s.is_empty() { "ab".into() } else { s }, false)
            }),
        ],
        any::<bool>(),
        prop::option::weighted(
            0.3,
            prop::sample::select(vec!["*.txt", "*.rs", "sub/**", "**/*.md"]),
        ),
        prop::option::weighted(
            0.2,
            prop::sample::select(vec!["sub", "sub/c.txt", "other", "made"]),
        ),
        prop::sample::select(vec![1usize, 2, 1000]),
    )
        .prop_map(|((query, regex), ci, glob, path, max)| SearchFilesInput {
            query,
            regex: Some(regex),
            case_insensitive: Some(ci),
            glob: glob.map(String::from),
            path: path.map(String::from),
            max_results: Some(max),
        })
}

fn write(root: &Path, name: &str, bytes: &[u8]) {
    let path = root.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

fn apply(root: &Path, op: &Op) {
    // Failures (deleting a missing file) are part of the game.
    match op {
        Op::Write(f, bytes) => write(root, NAMES[*f], bytes),
        Op::Delete(f) => {
            let _ = std::fs::remove_file(root.join(NAMES[*f]));
        }
        Op::Rename(a, b) => {
            let to = root.join(NAMES[*b]);
            let _ = std::fs::create_dir_all(to.parent().unwrap());
            let _ = std::fs::rename(root.join(NAMES[*a]), to);
        }
        Op::MoveFolder(a, b) => {
            let to = root.join(FOLDERS[*b]);
            let _ = std::fs::create_dir_all(to.parent().unwrap());
            let _ = std::fs::rename(root.join(FOLDERS[*a]), to);
        }
        Op::RemoveFolder(f) => {
            let _ = std::fs::remove_dir_all(root.join(FOLDERS[*f]));
        }
        Op::Ignore(i) => write(root, ".gitignore", IGNORES[*i].as_bytes()),
    }
}

/// Whether the query has three bytes of literal text in every alternative
/// for sure: a plain literal of three characters or more.
fn surely_indexable(input: &SearchFilesInput) -> bool {
    input.regex == Some(false) && input.query.chars().count() >= 3
}

/// Runs the query both ways and checks they agree; returns whether the
/// index was used (`None`: both failed alike).
fn agree(root: &ProjectRoot, config: &IndexConfig, input: &SearchFilesInput) -> Option<bool> {
    let plain = search::search_files(root, input);
    let indexed = search::search_files_indexed(root, input, config);
    match (plain, indexed) {
        (Err(a), Err(b)) => {
            assert_eq!(a, b);
            None
        }
        (Ok(plain), Ok(indexed)) => {
            assert!(!plain.indexed);
            assert_eq!(plain.truncated, indexed.truncated, "{input:?}");
            if plain.truncated {
                // Which matches a capped parallel search returns is not
                // fixed; all of them must be real ones, and as many.
                assert_eq!(plain.matches.len(), indexed.matches.len(), "{input:?}");
                let all = uncapped(root, input);
                for m in &indexed.matches {
                    assert!(all.contains(&(m.path.clone(), m.line)), "{m:?} {input:?}");
                }
            } else {
                assert_eq!(plain.matches, indexed.matches, "{input:?}");
            }
            Some(indexed.indexed)
        }
        (a, b) => panic!("one failed, the other did not: {a:?} / {b:?} for {input:?}"),
    }
}

fn uncapped(root: &ProjectRoot, input: &SearchFilesInput) -> BTreeSet<(String, u64)> {
    let mut input = input.clone();
    input.max_results = Some(1000);
    let out: SearchFilesOutput = search::search_files(root, &input).unwrap();
    assert!(!out.truncated);
    out.matches.into_iter().map(|m| (m.path, m.line)).collect()
}

fn config(dir: &Path) -> IndexConfig {
    IndexConfig {
        dir: dir.to_path_buf(),
        settle: SETTLE,
        build_missing: true,
        live: None,
    }
}

/// A project of the given files (and a `.gitignore` leaving out `*.log`),
/// with an empty folder for its index.
fn random_project(
    files: &[(usize, Vec<u8>)],
) -> (tempfile::TempDir, tempfile::TempDir, ProjectRoot) {
    let project = tempfile::tempdir().unwrap();
    let store = tempfile::tempdir().unwrap();
    write(project.path(), ".gitignore", b"*.log\n");
    for (f, bytes) in files {
        write(project.path(), NAMES[*f], bytes);
    }
    let root = ProjectRoot::open(project.path()).unwrap();
    (project, store, root)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn indexed_and_plain_search_agree_before_and_after_edits(
        files in prop::collection::vec((0..NAMES.len(), content()), 1..12),
        queries in prop::collection::vec(query(), 1..6),
        ops in prop::collection::vec(op(), 0..8),
    ) {
        let (project, store, root) = random_project(&files);
        let config = config(store.path());
        std::thread::sleep(SETTLE * 2);
        search::index::build(&root, &config).unwrap();
        let index_file = std::fs::read_dir(store.path()).unwrap().count();
        prop_assert_eq!(index_file, 1);

        for input in &queries {
            let used = agree(&root, &config, input);
            if surely_indexable(input) && used.is_some() {
                prop_assert_eq!(used, Some(true), "the index was not used for {:?}", input);
            }
        }
        let built = std::fs::read(std::fs::read_dir(store.path()).unwrap().next().unwrap().unwrap().path()).unwrap();
        for op in &ops {
            apply(project.path(), op);
        }
        for input in &queries {
            agree(&root, &config, input);
        }
        // Still the same index: nothing was rebuilt, freshness came from the stat.
        let after = std::fs::read(std::fs::read_dir(store.path()).unwrap().next().unwrap().unwrap().path()).unwrap();
        prop_assert!(built == after, "the index was rebuilt");
    }
}

/// A live index built over `root` in `store`, and the config that uses it.
fn live(root: &ProjectRoot, store: &Path) -> (std::sync::Arc<LiveIndex>, IndexConfig) {
    let live = LiveIndex::new(root, &config(store)).unwrap();
    live.build(&search::BuildProgress::default()).unwrap();
    assert!(live.is_ready());
    (live.clone(), config(store).watched_by(live))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// The same promise with a live index, whose queries skip the walk: the
    /// watch must have seen every edit, creation, deletion, rename, folder
    /// moved or removed and ignore rule changed, made just before the query.
    #[test]
    fn a_live_index_finds_what_the_walk_finds_right_after_edits(
        files in prop::collection::vec((0..NAMES.len(), content()), 1..12),
        queries in prop::collection::vec(query(), 1..6),
        ops in prop::collection::vec(op(), 0..10),
    ) {
        let (project, store, root) = random_project(&files);
        let (live, config) = live(&root, store.path());
        for input in &queries {
            let before = live.walk_free_queries();
            let used = agree(&root, &config, input);
            if surely_indexable(input) && input.path.is_none() && used.is_some() {
                prop_assert_eq!(live.walk_free_queries(), before + 1, "the walk was not skipped for {:?}", input);
            }
        }
        for op in &ops {
            apply(project.path(), op);
        }
        let rules_kept = !ops.iter().any(|op| matches!(op, Op::Ignore(_)));
        for input in &queries {
            let before = live.walk_free_queries();
            let used = agree(&root, &config, input);
            if rules_kept && surely_indexable(input) && input.path.is_none() && used.is_some() {
                prop_assert_eq!(live.walk_free_queries(), before + 1, "the walk was not skipped for {:?} after {:?}", input, ops);
            }
        }
    }
}

#[test]
fn a_live_index_sees_a_file_written_just_before_the_query_and_a_new_folder() {
    let (dir, root) = project_with(&[("a.txt", "alpha\n"), ("src/b.rs", "beta\n")]);
    let store = tempfile::tempdir().unwrap();
    let (live, config) = live(&root, store.path());
    write(dir.path(), "src/b.rs", b"needle here\n");
    write(dir.path(), "fresh/deeper/c.txt", b"a needle\n");
    write(dir.path(), "fresh/.secret.env", b"needle\n");
    let out = search::search_files_indexed(&root, &literal("needle"), &config).unwrap();
    let paths: Vec<_> = out.matches.iter().map(|m| m.path.as_str()).collect();
    assert_eq!(paths, ["fresh/deeper/c.txt", "src/b.rs"]);
    assert!(out.indexed);
    assert_eq!(live.walk_free_queries(), 1);
    // A file deleted and one moved away are gone from the answer.
    std::fs::remove_file(dir.path().join("src/b.rs")).unwrap();
    std::fs::rename(dir.path().join("fresh"), dir.path().join(".stash")).unwrap();
    let out = search::search_files_indexed(&root, &literal("needle"), &config).unwrap();
    assert!(out.matches.is_empty(), "{out:?}");
    assert_eq!(live.walk_free_queries(), 2);
}

#[test]
fn a_live_index_walks_when_the_rules_change_and_is_rebuilt_aside() {
    let (dir, root) = project_with(&[("a.txt", "needle\n"), ("b.txt", "needle\n")]);
    let store = tempfile::tempdir().unwrap();
    let (live, config) = live(&root, store.path());
    write(dir.path(), ".gitignore", b"b.txt\n");
    let out = search::search_files_indexed(&root, &literal("needle"), &config).unwrap();
    let paths: Vec<_> = out.matches.iter().map(|m| m.path.as_str()).collect();
    assert_eq!(paths, ["a.txt"]);
    assert_eq!(
        live.walk_free_queries(),
        0,
        "the watch vouched past a rule change"
    );
    // A new generation is built in the background; then the walk is skipped again.
    let until = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let out = search::search_files_indexed(&root, &literal("needle"), &config).unwrap();
        let paths: Vec<_> = out.matches.iter().map(|m| m.path.as_str()).collect();
        assert_eq!(paths, ["a.txt"]);
        if live.walk_free_queries() > 0 {
            break;
        }
        assert!(std::time::Instant::now() < until, "never rebuilt");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_live_index_walks_once_a_repository_with_its_own_excludes_appears() {
    let (dir, root) = project_with(&[("a.txt", "needle\n"), ("b.txt", "needle\n")]);
    let store = tempfile::tempdir().unwrap();
    let (live, config) = live(&root, store.path());
    // `git init` after the build, then an exclude rule of its own.
    write(dir.path(), ".git/info/exclude", b"b.txt\n");
    let plain = search::search_files(&root, &literal("needle")).unwrap();
    let indexed = search::search_files_indexed(&root, &literal("needle"), &config).unwrap();
    let paths: Vec<_> = plain.matches.iter().map(|m| m.path.as_str()).collect();
    assert_eq!(paths, ["a.txt"]);
    assert_eq!(plain.matches, indexed.matches);
    assert_eq!(
        live.walk_free_queries(),
        0,
        "the watch vouched past a new .git"
    );
}

#[test]
fn a_live_index_walks_a_hidden_or_ignored_folder_named_as_path() {
    let (dir, root) = project_with(&[
        ("a.txt", "needle\n"),
        (".tools/x.txt", "needle\n"),
        ("vendor/y.txt", "needle\n"),
        (".gitignore", "vendor/\n"),
    ]);
    let store = tempfile::tempdir().unwrap();
    let (live, config) = live(&root, store.path());
    for folder in [".tools", "vendor"] {
        let mut input = literal("needle");
        input.path = Some(folder.into());
        let plain = search::search_files(&root, &input).unwrap();
        let indexed = search::search_files_indexed(&root, &input, &config).unwrap();
        assert_eq!(plain.matches.len(), 1, "{folder}");
        assert_eq!(plain.matches, indexed.matches, "{folder}");
    }
    assert_eq!(live.walk_free_queries(), 0);
    drop(dir);
}

#[test]
fn a_live_index_leaves_nothing_behind_when_dropped() {
    let (_dir, root) = project_with(&[("a.txt", "needle\n")]);
    let store = tempfile::tempdir().unwrap();
    let (live, config) = live(&root, store.path());
    search::search_files_indexed(&root, &literal("needle"), &config).unwrap();
    drop(config);
    drop(live);
    let left: Vec<_> = std::fs::read_dir(store.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(left[0].ends_with(".idx"), "{left:?}");
}

fn project_with(files: &[(&str, &str)]) -> (tempfile::TempDir, ProjectRoot) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        write(dir.path(), name, text.as_bytes());
    }
    let root = ProjectRoot::open(dir.path()).unwrap();
    (dir, root)
}

fn literal(q: &str) -> SearchFilesInput {
    serde_json::from_value(json!({"query": q, "regex": false})).unwrap()
}

fn only_file(dir: &Path) -> std::path::PathBuf {
    let mut all: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(all.len(), 1, "{all:?}");
    all.remove(0)
}

#[test]
fn the_index_is_built_on_first_use_outside_the_project_and_skips_files() {
    let (dir, root) = project_with(&[("a.txt", "needle here\n"), ("b.txt", "hay\n")]);
    let store = tempfile::tempdir().unwrap();
    let config = config(store.path());
    std::thread::sleep(SETTLE * 2);
    let out = search::search_files_indexed(&root, &literal("needle"), &config).unwrap();
    assert!(out.indexed);
    assert_eq!(out.matches.len(), 1);
    assert_eq!(out.matches[0].path, "a.txt");
    // Nothing was written inside the project.
    let names: BTreeSet<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(
        names,
        BTreeSet::from(["a.txt".to_string(), "b.txt".to_string()])
    );
    assert!(only_file(store.path()).metadata().unwrap().len() > 0);
}

#[test]
fn a_pattern_without_trigrams_scans_every_file() {
    let (_dir, root) = project_with(&[("a.txt", "ab\n")]);
    let store = tempfile::tempdir().unwrap();
    let input: SearchFilesInput = serde_json::from_value(json!({"query": "a."})).unwrap();
    let out = search::search_files_indexed(&root, &input, &config(store.path())).unwrap();
    assert!(!out.indexed);
    assert_eq!(out.matches.len(), 1);
}

#[test]
fn a_damaged_index_is_rebuilt_not_trusted() {
    let (dir, root) = project_with(&[("a.txt", "needle\n")]);
    let store = tempfile::tempdir().unwrap();
    let config = config(store.path());
    std::thread::sleep(SETTLE * 2);
    search::index::build(&root, &config).unwrap();
    let file = only_file(store.path());
    let good = std::fs::read(&file).unwrap();

    // Every single flipped byte: the answer stays right.
    write(dir.path(), "b.txt", b"needle too\n");
    for at in (0..good.len()).step_by(7) {
        let mut bad = good.clone();
        bad[at] ^= 0x55;
        std::fs::write(&file, &bad).unwrap();
        let out = search::search_files_indexed(&root, &literal("needle"), &config).unwrap();
        let paths: Vec<_> = out.matches.iter().map(|m| m.path.as_str()).collect();
        assert_eq!(paths, ["a.txt", "b.txt"], "byte {at}");
        assert!(out.indexed);
    }
    // Truncated and foreign ones too.
    std::fs::write(&file, &good[..good.len() / 2]).unwrap();
    let out = search::search_files_indexed(&root, &literal("needle"), &config).unwrap();
    assert_eq!(out.matches.len(), 2);
    assert_ne!(std::fs::read(&file).unwrap(), good[..good.len() / 2]);
}

#[test]
fn an_index_of_another_folder_is_not_used_for_this_one() {
    let (_a, first) = project_with(&[("x.txt", "needle\n")]);
    let (_b, second) = project_with(&[("y.txt", "needle\n")]);
    let store = tempfile::tempdir().unwrap();
    let config = config(store.path());
    std::thread::sleep(SETTLE * 2);
    search::index::build(&first, &config).unwrap();
    let file = only_file(store.path());
    // Pretend the second project's index is the first's.
    search::index::build(&second, &config).unwrap();
    let second_file = std::fs::read_dir(store.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| *p != file)
        .unwrap();
    std::fs::copy(&file, &second_file).unwrap();
    let out = search::search_files_indexed(&second, &literal("needle"), &config).unwrap();
    assert_eq!(out.matches.len(), 1);
    assert_eq!(out.matches[0].path, "y.txt");
}

#[test]
fn a_file_changed_just_before_the_build_is_searched_directly() {
    // No settle wait: every file is too fresh to trust, and a same-size
    // rewrite in the same instant is still found.
    let (dir, root) = project_with(&[("a.txt", "aaaaaa\n")]);
    let store = tempfile::tempdir().unwrap();
    let config = IndexConfig::new(store.path());
    search::index::build(&root, &config).unwrap();
    write(dir.path(), "a.txt", b"needle\n");
    let out = search::search_files_indexed(&root, &literal("needle"), &config).unwrap();
    assert!(out.indexed);
    assert_eq!(out.matches.len(), 1);
}

#[test]
fn dispatch_uses_the_index_of_the_call_context() {
    let (_dir, root) = project_with(&[("a.txt", "needle\n")]);
    let store = tempfile::tempdir().unwrap();
    let mut ctx = CallContext::new(Mode::ReadOnly, Approval::None);
    let plain = dispatch::call(&root, "search_files", json!({"query": "needle"}), &ctx).unwrap();
    assert_eq!(plain["indexed"], false);
    ctx.search_index = Some(config(store.path()));
    let indexed = dispatch::call(&root, "search_files", json!({"query": "needle"}), &ctx).unwrap();
    assert_eq!(indexed["indexed"], true);
    assert_eq!(indexed["matches"], plain["matches"]);
    assert_eq!(indexed["truncated"], plain["truncated"]);
}

#[test]
fn an_index_far_out_of_date_is_rebuilt_after_the_query() {
    let (dir, root) = project_with(&[("a.txt", "needle\n")]);
    let store = tempfile::tempdir().unwrap();
    let config = config(store.path());
    std::thread::sleep(SETTLE * 2);
    search::index::build(&root, &config).unwrap();
    let file = only_file(store.path());
    let input: SearchFilesInput =
        serde_json::from_value(json!({"query": "needle", "max_results": 1000})).unwrap();
    let before = std::fs::read(&file).unwrap();

    // A few new files are searched directly; the index stays.
    for i in 0..10 {
        write(dir.path(), &format!("new{i}.txt"), b"needle\n");
    }
    let out = search::search_files_indexed(&root, &input, &config).unwrap();
    assert_eq!(out.matches.len(), 11);
    assert_eq!(std::fs::read(&file).unwrap(), before);

    // Hundreds: answered right, then rebuilt with them in it.
    for i in 10..300 {
        write(dir.path(), &format!("new{i}.txt"), b"needle\n");
    }
    let out = search::search_files_indexed(&root, &input, &config).unwrap();
    assert_eq!(out.matches.len(), 301);
    assert!(out.indexed);
    assert_ne!(std::fs::read(&file).unwrap(), before);
}

#[test]
fn a_prebuilt_index_is_never_waited_for_and_a_drifted_one_is_rebuilt_aside() {
    prebuilt_index_is_never_waited_for_and_rebuilt_aside(false);
}

#[test]
fn with_a_watch_that_never_got_going_a_drifted_index_is_still_rebuilt() {
    prebuilt_index_is_never_waited_for_and_rebuilt_aside(true);
}

/// `unbuilt_watch`: a live index is attached whose build never ran (its
/// watch could not start it), so it rebuilds nothing itself.
fn prebuilt_index_is_never_waited_for_and_rebuilt_aside(unbuilt_watch: bool) {
    let (dir, root) = project_with(&[("a.txt", "needle\n")]);
    let store = tempfile::tempdir().unwrap();
    let mut config = IndexConfig {
        build_missing: false,
        ..config(store.path())
    };
    let watch_dir = tempfile::tempdir().unwrap();
    if unbuilt_watch {
        let live = LiveIndex::new(&root, &IndexConfig::new(watch_dir.path())).unwrap();
        config = config.watched_by(live);
    }
    // No index yet: the query scans, and builds none.
    let out = search::search_files_indexed(&root, &literal("needle"), &config).unwrap();
    assert!(!out.indexed);
    assert_eq!(out.matches.len(), 1);
    assert_eq!(std::fs::read_dir(store.path()).unwrap().count(), 0);
    // Built (with its progress counted), it is used.
    std::thread::sleep(SETTLE * 2);
    let progress = search::BuildProgress::default();
    search::build_index(&root, &config, &progress).unwrap();
    use std::sync::atomic::Ordering::Relaxed;
    assert_eq!(progress.listed.load(Relaxed), 1);
    assert_eq!(progress.indexed.load(Relaxed), 1);
    let out = search::search_files_indexed(&root, &literal("needle"), &config).unwrap();
    assert!(out.indexed);
    // Many files drift: the answer is right at once, and the index is
    // rebuilt on a thread of its own, after which they are indexed.
    for i in 0..300 {
        write(dir.path(), &format!("new{i}.txt"), b"other\n");
    }
    write(dir.path(), "new7.txt", b"needle\n");
    let before = index_time(store.path());
    let out = search::search_files_indexed(&root, &literal("needle"), &config).unwrap();
    let paths: Vec<_> = out.matches.iter().map(|m| m.path.as_str()).collect();
    assert_eq!(paths, ["a.txt", "new7.txt"]);
    let until = std::time::Instant::now() + Duration::from_secs(20);
    while index_time(store.path()) == before {
        assert!(
            std::time::Instant::now() < until,
            "no rebuild in the background"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// When the index in `dir` was last written (a rebuild's temporary file,
/// there for a moment, is not it).
fn index_time(dir: &Path) -> std::time::SystemTime {
    let index: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !p.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert_eq!(index.len(), 1, "{index:?}");
    index[0].metadata().unwrap().modified().unwrap()
}
