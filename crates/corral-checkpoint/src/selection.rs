//! What a restore of a scope changes, and what it leaves as it is.

use crate::compare::{self, Change};
use crate::restore::{self, Scope, Skipped};
use crate::tree::Kind;
use std::collections::BTreeSet;
use std::path::PathBuf;

/// The changes a restore of `scope` makes.
pub(crate) fn selected(changes: &[Change], scope: &Scope) -> Vec<Change> {
    changes
        .iter()
        .filter(|c| scope.includes(c))
        .cloned()
        .collect()
}

/// The paths `changes` touch, and only those: what undoing them puts back.
pub(crate) fn changed_paths(changes: &[Change]) -> Scope {
    Scope::Exactly(
        changes
            .iter()
            .map(|c| c.path.clone())
            .collect::<BTreeSet<PathBuf>>(),
    )
}

/// What a restore will leave as it is, known before it starts.
pub(crate) fn foreseen_skips(changes: &[Change]) -> Vec<Skipped> {
    let mut out = Vec::new();
    for change in changes {
        let path = compare::display(&change.path);
        if let Some(Kind::Large { size, .. }) = &change.to {
            out.push(Skipped {
                path,
                reason: restore::large_not_kept(*size),
                ignored: false,
            });
        } else if let (Some(Kind::Large { size, .. }), None) = (&change.from, &change.to) {
            out.push(Skipped {
                path,
                reason: restore::large_kept(*size),
                ignored: false,
            });
        }
    }
    out
}

/// Most ignored entries a diff or restore names; past it, one line says how
/// many more.
pub(crate) const MAX_IGNORED_SHOWN: usize = 100;

/// The ignored entries that differ between the project now and the
/// checkpoint, under `scope`: a restore leaves each as it is (nothing of
/// an ignored entry is kept, so nothing of it can be put back or checked).
pub(crate) fn ignored_skips(ignored: &[Change], scope: &Scope) -> Vec<Skipped> {
    let chosen: Vec<&Change> = ignored.iter().filter(|c| scope.includes(c)).collect();
    let mut out: Vec<Skipped> = chosen
        .iter()
        .take(MAX_IGNORED_SHOWN)
        .map(|change| {
            let why = match (&change.from, &change.to) {
                (Some(Kind::Ignored), None) => {
                    "not there when the checkpoint was taken; left as it is"
                }
                (None, _) => {
                    "there when the checkpoint was taken; nothing of it was kept to bring back"
                }
                (Some(Kind::Ignored), Some(_)) => {
                    "the ignore rules leave it out now; left as it is"
                }
                (Some(_), _) => {
                    "the ignore rules left it out when the checkpoint was taken; left as it is"
                }
            };
            Skipped {
                path: compare::display(&change.path),
                reason: format!("ignored, not kept: {why}"),
                ignored: true,
            }
        })
        .collect();
    if chosen.len() > MAX_IGNORED_SHOWN {
        out.push(Skipped {
            path: "…".to_string(),
            reason: format!(
                "ignored, not kept: {} more ignored entries differ, each left as it is",
                chosen.len() - MAX_IGNORED_SHOWN
            ),
            ignored: true,
        });
    }
    out
}
