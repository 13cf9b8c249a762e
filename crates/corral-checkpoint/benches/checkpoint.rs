//! Checkpoints of a 10,000-file, 200 MB project: with nothing changed, with
//! 10 files changed, a restore of 100 changed files, and the store's size
//! after 100 checkpoints of small edits (printed, not timed). Beside the
//! first two, in the same run, git's own snapshot of the same tree: `git
//! add --all` and `git write-tree` in a shadow repository (its index warm),
//! through a shell, the tree's id written to a file.
//!
//! `cargo bench -p corral-checkpoint --bench checkpoint`
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use corral_checkpoint::{NewCheckpoint, Store, DEFAULT_CAP_BYTES};
use corral_fs::ProjectRoot;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use std::path::{Path, PathBuf};
use std::time::Duration;

const DIRS: usize = 100;
const FILES_PER_DIR: usize = 100;
const FILE_BYTES: usize = 20 * 1024;

/// Text that differs from file to file (so every blob is its own).
fn content(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.extend_from_slice(format!("{x:016x} ").as_bytes());
        if out.len() % 81 < 17 {
            out.push(b'\n');
        }
    }
    out.truncate(len);
    out
}

fn file(root: &Path, i: usize) -> PathBuf {
    root.join(format!(
        "d{:03}/f{:03}.txt",
        i / FILES_PER_DIR,
        i % FILES_PER_DIR
    ))
}

struct Fixture {
    _tmp: tempfile::TempDir,
    project: PathBuf,
    root: ProjectRoot,
    store: Store,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    for d in 0..DIRS {
        std::fs::create_dir_all(project.join(format!("d{d:03}"))).unwrap();
    }
    for i in 0..DIRS * FILES_PER_DIR {
        std::fs::write(file(&project, i), content(i as u64, FILE_BYTES)).unwrap();
    }
    // Files younger than a second are hashed again by every checkpoint
    // (their mtime could still be shared with a write to come).
    std::thread::sleep(Duration::from_millis(1100));
    let root = ProjectRoot::open(&project).unwrap();
    let store = Store::open(&tmp.path().join("store"), DEFAULT_CAP_BYTES).unwrap();
    store
        .checkpoint(&root, NewCheckpoint::manual("base"))
        .unwrap();
    Fixture {
        _tmp: tmp,
        project,
        root,
        store,
    }
}

fn edit(project: &Path, files: impl Iterator<Item = usize>, round: u64) {
    for i in files {
        let mut bytes = std::fs::read(file(project, i)).unwrap();
        bytes.extend_from_slice(format!("edit {round}\n").as_bytes());
        std::fs::write(file(project, i), bytes).unwrap();
    }
}

/// Appends a line to 10 files spread over the project, other ones each round.
fn edit_ten(project: &Path, round: &mut u64) {
    *round += 1;
    let r = *round;
    edit(project, (0..10).map(|k| (k * 997 + r as usize) % 10_000), r);
}

fn bench(c: &mut Criterion) {
    let f = fixture();
    let mut group = c.benchmark_group("checkpoint 10,000 files, 200 MB");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(10));

    group.bench_function("nothing changed", |b| {
        b.iter(|| {
            f.store
                .checkpoint(&f.root, NewCheckpoint::manual("same"))
                .unwrap()
        })
    });

    let mut round = 0u64;
    group.bench_function("10 files changed", |b| {
        b.iter_batched(
            || edit_ten(&f.project, &mut round),
            |()| {
                f.store
                    .checkpoint(&f.root, NewCheckpoint::manual("ten"))
                    .unwrap()
            },
            BatchSize::PerIteration,
        )
    });

    let base = f
        .store
        .checkpoint(&f.root, NewCheckpoint::manual("restore base"))
        .unwrap();
    // git's snapshot, the same way each time: a shell, `add --all` into a
    // shadow repository's index (warm: made once before), `write-tree`,
    // its id written to a file.
    let shadow = f._tmp.path().join("shadow.git");
    let git_snapshot = || {
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg("git add --all && git write-tree > \"$GIT_DIR/snapshot\"")
            .env("GIT_DIR", &shadow)
            .env("GIT_WORK_TREE", &f.project)
            .status()
            .unwrap();
        assert!(status.success());
    };
    let init = std::process::Command::new("git")
        .args(["init", "--quiet", "--bare"])
        .arg(&shadow)
        .status()
        .unwrap();
    assert!(init.success());
    git_snapshot();
    group.bench_function("git add --all and write-tree, nothing changed", |b| {
        b.iter(git_snapshot)
    });
    group.bench_function("git add --all and write-tree, 10 files changed", |b| {
        b.iter_batched(
            || edit_ten(&f.project, &mut round),
            |()| git_snapshot(),
            BatchSize::PerIteration,
        )
    });

    group.bench_function("restore 100 changed files", |b| {
        b.iter_batched(
            || {
                round += 1;
                edit(&f.project, (0..100).map(|k| k * 97 % 10_000), round);
            },
            |()| f.store.restore(&f.root, &base.id, None).unwrap(),
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

/// Bytes the files of `dir` take on disk (allocated blocks), and how many.
fn disk_usage(dir: &Path) -> (u64, usize) {
    use std::os::unix::fs::MetadataExt;
    let (mut bytes, mut count) = (0, 0);
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let meta = entry.metadata().unwrap();
            if meta.is_dir() {
                stack.push(entry.path());
            } else {
                bytes += meta.blocks() * 512;
                count += 1;
            }
        }
    }
    (bytes, count)
}

fn disk_after_small_edits(_: &mut Criterion) {
    let f = fixture();
    let (project_bytes, _) = disk_usage(&f.project);
    let (before, _) = disk_usage(f.store.path());
    for round in 0..100u64 {
        // One line appended to one file, then a checkpoint, as before each edit.
        edit(
            &f.project,
            std::iter::once((round as usize * 101) % 10_000),
            round,
        );
        f.store
            .checkpoint(&f.root, NewCheckpoint::manual("small edit"))
            .unwrap();
    }
    let (after, files) = disk_usage(f.store.path());
    println!(
        "disk: project {:.1} MB; store after the first checkpoint {:.1} MB; after 100 more checkpoints of one-line edits {:.1} MB (+{:.2} MB, {:.1} KB per checkpoint), {files} files",
        project_bytes as f64 / 1e6,
        before as f64 / 1e6,
        after as f64 / 1e6,
        (after - before) as f64 / 1e6,
        (after - before) as f64 / 1e3 / 100.0
    );
}

criterion_group!(benches, bench, disk_after_small_edits);
criterion_main!(benches);
