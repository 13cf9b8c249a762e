//! read/write/edit of a 1 MiB file through corral-tools (target: a few ms).
//! Run: cargo bench -p corral-tools --bench files
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use corral_tools::fs::{
    edit_file, read_file, write_file, EditFileInput, ReadFileInput, WriteFileInput,
};
use corral_tools::ProjectRoot;
use criterion::{criterion_group, criterion_main, Criterion};

fn one_mib() -> String {
    // 16,384 lines of 64 bytes: a realistic source-like file of 1 MiB.
    (0..16_384)
        .map(|i| format!("let value_{i:08} = compute({i:08}); // some trailing text\n"))
        .map(|line| format!("{line:>64}"))
        .collect()
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let root = ProjectRoot::open(dir.path()).unwrap();
    let content = one_mib();
    assert!(content.len() >= 1024 * 1024);
    write_file(
        &root,
        &WriteFileInput {
            path: "big.rs".into(),
            content: content.clone(),
        },
    )
    .unwrap();

    c.bench_function("read_file 1 MiB (first window)", |b| {
        b.iter(|| {
            read_file(
                &root,
                &ReadFileInput {
                    path: "big.rs".into(),
                    start_line: None,
                    end_line: None,
                },
            )
            .unwrap()
        })
    });
    c.bench_function("read_file 1 MiB (last window)", |b| {
        b.iter(|| {
            read_file(
                &root,
                &ReadFileInput {
                    path: "big.rs".into(),
                    start_line: Some(15_000),
                    end_line: None,
                },
            )
            .unwrap()
        })
    });
    c.bench_function("write_file 1 MiB (atomic, fsync)", |b| {
        b.iter(|| {
            write_file(
                &root,
                &WriteFileInput {
                    path: "big.rs".into(),
                    content: content.clone(),
                },
            )
            .unwrap()
        })
    });
    // Each iteration swaps the spelling back and forth, so every edit matches once.
    let mut spellings = ["compute(00008000)", "COMPUTE(00008000)"];
    c.bench_function(
        "edit_file 1 MiB (one replacement, diff, atomic write)",
        |b| {
            b.iter(|| {
                let [from, to] = spellings;
                let input = EditFileInput {
                    path: "big.rs".into(),
                    old_string: from.into(),
                    new_string: to.into(),
                    replace_all: false,
                };
                edit_file(&root, &input).unwrap();
                spellings = [to, from];
            })
        },
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = bench
}
criterion_main!(benches);
