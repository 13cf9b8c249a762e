//! A restore that fails at any one of its steps (each removal, new
//! folder, temp file, rename, folder mode): the project is put back as it
//! was, or, when putting it back fails too, rolled forward at the next
//! open. With an injected error, and with a disk that really fills up (a
//! small tmpfs, mounted in a user and mount namespace of the test's own;
//! corral-tools' `checkpoint_faults.rs` fills one before a restore and
//! under the store).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods
)]

use super::restore::{Fault, FAULT};
use super::{NewCheckpoint, Store};
use corral_fs::root::ProjectRoot;
use disk::{fill, on_small_tmpfs, small_tmpfs};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use tree::snapshot as state;

fn write(root: &Path, rel: &str, bytes: impl AsRef<[u8]>) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// A project in `at`, checkpointed (state A), then changed every way a
/// restore undoes (state B). Returns the project, its store and A's id.
fn scene(at: &Path, store_at: &Path, big: usize) -> (ProjectRoot, Store, String) {
    let project = at.join("app");
    std::fs::create_dir_all(&project).unwrap();
    write(&project, "keep.txt", "unchanged\n");
    write(&project, "a.txt", "a, as checkpointed\n");
    write(&project, "gone.txt", "removed later\n");
    write(
        &project,
        "dir/inner.txt",
        "in a folder that becomes a file\n",
    );
    write(&project, "tree/deep/x.bin", vec![7u8; big]);
    write(&project, "tree/y.txt", "y\n");
    std::os::unix::fs::symlink("a.txt", project.join("link")).unwrap();
    std::fs::set_permissions(project.join("tree"), std::fs::Permissions::from_mode(0o750)).unwrap();
    let root = ProjectRoot::open(&project).unwrap();
    let store = Store::open(store_at, super::DEFAULT_CAP_BYTES).unwrap();
    let a = store.checkpoint(&root, NewCheckpoint::manual("A")).unwrap();
    write(&project, "a.txt", "a, changed\n");
    std::fs::remove_file(project.join("gone.txt")).unwrap();
    std::fs::remove_dir_all(project.join("dir")).unwrap();
    write(&project, "dir", "a file where the folder was\n");
    std::fs::remove_dir_all(project.join("tree")).unwrap();
    write(&project, "new/made.txt", "made after\n");
    std::fs::remove_file(project.join("link")).unwrap();
    std::os::unix::fs::symlink("keep.txt", project.join("link")).unwrap();
    (root, store, a.id)
}

fn inject(after: usize, fault: Fault) {
    FAULT.with(|f| *f.borrow_mut() = Some((after, fault)));
}

/// Whether the fault set is still waiting (its step was never reached).
fn clear() -> bool {
    FAULT.with(|f| f.borrow_mut().take()).is_some()
}

/// Runs the restore with a fault at every step in turn, until one run
/// ends before the fault's step. `fault(n)` makes the fault; after the
/// error, `then` runs (to free the disk). Each failed run leaves the
/// project as before, or (state `partial`) as after once the store is
/// next opened. Returns how many steps a whole restore has.
fn every_step(
    base: &Path,
    big: usize,
    fault: &dyn Fn() -> Fault,
    then: &dyn Fn(),
    store_base: &Path,
) -> (usize, usize) {
    let mut partial = 0;
    for n in 0.. {
        let at = base.join(format!("run-{n}"));
        let store_at = store_base.join(format!("store-{n}"));
        let (root, store, a) = scene(&at, &store_at, big);
        let project = at.join("app");
        let b = state(&project);
        let checkpointed = {
            // A's state, from a restore that is let run.
            let other = base.join(format!("clean-{n}"));
            let (root, store, a) = scene(&other, &store_base.join(format!("clean-store-{n}")), big);
            store.restore(&root, &a, None).unwrap();
            let s = state(&other.join("app"));
            std::fs::remove_dir_all(&other).unwrap();
            s
        };
        let fired = std::rc::Rc::new(std::cell::Cell::new(false));
        let (flag, act) = (fired.clone(), fault());
        inject(
            n,
            Box::new(move || {
                flag.set(true);
                act()
            }),
        );
        let result = store.restore(&root, &a, None);
        clear();
        let fired = fired.get();
        let err = match result {
            Ok(restored) => {
                then();
                assert_eq!(restored.restored, a);
                assert_eq!(state(&project), checkpointed, "step {n}");
                std::fs::remove_dir_all(&at).unwrap();
                if !fired {
                    // The restore ended before step n: it has n steps.
                    return (n, partial);
                }
                // The fault did not stop it (a full disk, at a step that
                // needs no room).
                continue;
            }
            Err(err) => err,
        };
        assert!(fired, "step {n}: {}", err.message);
        then();
        assert_eq!(err.code.as_str(), "io", "step {n}: {}", err.message);
        assert!(err.message.contains("failed at `"), "{}", err.message);
        match err.details["state"].as_str() {
            Some("before") => {
                assert!(err.message.contains("put back"), "{}", err.message);
                assert_eq!(state(&project), b, "step {n}: not put back");
                assert!(!store_at.join("journal.json").exists());
            }
            Some("partial") => {
                partial += 1;
                assert!(store_at.join("journal.json").exists());
                // The next open finishes it.
                store.list(&root).unwrap();
                assert_eq!(
                    state(&project),
                    checkpointed,
                    "step {n}: not rolled forward"
                );
                assert_eq!(store.take_warnings(), Vec::<String>::new());
            }
            other => panic!("step {n}: state {other:?}: {}", err.message),
        }
        std::fs::remove_dir_all(&at).unwrap();
    }
    unreachable!()
}

#[test]
fn a_restore_failing_at_any_step_is_put_back_as_it_was() {
    let tmp = tempfile::tempdir().unwrap();
    let fault = || -> Fault { Box::new(|| Some(std::io::Error::from_raw_os_error(5))) };
    let (steps, partial) = every_step(tmp.path(), 1000, &fault, &|| {}, tmp.path());
    assert!(steps > 10, "only {steps} steps");
    assert_eq!(partial, 0);
}

#[test]
fn a_restore_whose_rollback_fails_too_is_rolled_forward_at_the_next_open() {
    let tmp = tempfile::tempdir().unwrap();
    // The step fails, and so does the first step of putting it back.
    let fault = || -> Fault {
        Box::new(|| {
            inject(0, Box::new(|| Some(std::io::Error::from_raw_os_error(5))));
            Some(std::io::Error::from_raw_os_error(5))
        })
    };
    // A rollback with nothing to put back has no step: the second fault
    // is still waiting, and must not hit the next open.
    let then = || {
        clear();
    };
    let (steps, partial) = every_step(tmp.path(), 1000, &fault, &then, tmp.path());
    assert!(partial > steps / 2, "{partial} of {steps} rolled forward");
}

#[test]
fn a_restore_that_runs_out_of_space_midway_is_put_back_or_finished() {
    on_small_tmpfs("fault_tests::child_out_of_space_midway", "12m");
}

#[test]
#[ignore = "run by a_restore_that_runs_out_of_space_midway_is_put_back_or_finished, on a tmpfs"]
fn child_out_of_space_midway() {
    let small = small_tmpfs();
    let stores = tempfile::tempdir().unwrap();
    let disk = small.clone();
    // At each step the disk fills up: the step itself, or the next write,
    // meets a real ENOSPC. Freed after the error.
    let fault = move || -> Fault {
        let disk = disk.clone();
        Box::new(move || {
            fill(&disk);
            None
        })
    };
    let freed = small.join("filler");
    let then = move || {
        let _ = std::fs::remove_file(&freed);
    };
    let (steps, _) = every_step(&small, 256 * 1024, &fault, &then, stores.path());
    assert!(steps > 10);
}

/// The kit's small disk to fill, by path: the kit is built on this crate,
/// so its tests cannot depend on it.
#[path = "../../corral-testkit/src/disk.rs"]
mod disk;

/// The kit's folder state, by path, for the same reason (its
/// `differences` serves other suites).
#[allow(dead_code)]
#[path = "../../corral-testkit/src/tree.rs"]
mod tree;
