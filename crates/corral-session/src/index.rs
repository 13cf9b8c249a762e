//! The project's search index, built in the background when the session
//! opens and kept true by a watch; searches use it once it is built and
//! never wait for it.

use crate::lock;
use corral_tools::fs::watch::ProjectWatch;
use corral_tools::search::{BuildProgress, IndexConfig, LiveIndex};
use corral_tools::ProjectRoot;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Where the project's search index stands (the window shows it while it
/// is built).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum IndexStatus {
    /// Files listed by the walk and read so far.
    Building {
        #[ts(type = "number")]
        listed: u64,
        #[ts(type = "number")]
        indexed: u64,
    },
    Ready {
        #[ts(type = "number")]
        files: u64,
        #[ts(type = "number")]
        ms: u64,
    },
    /// Searches scan every file instead.
    Failed { message: String },
}

/// One build of a project's search index.
#[derive(Default)]
pub struct IndexJob {
    progress: BuildProgress,
    done: Mutex<Option<IndexStatus>>,
    /// The watch that keeps the index true, so searches skip the walk
    /// (`None` if no watch could start: searches then check each file).
    live: Mutex<Option<Arc<LiveIndex>>>,
}

impl IndexJob {
    pub fn status(&self) -> IndexStatus {
        lock(&self.done).clone().unwrap_or(IndexStatus::Building {
            listed: self.progress.listed.load(Relaxed) as u64,
            indexed: self.progress.indexed.load(Relaxed) as u64,
        })
    }

    /// The watch keeping the index true, once started.
    pub fn live(&self) -> Option<Arc<LiveIndex>> {
        lock(&self.live).clone()
    }

    /// The index a search uses: watched once the watch runs.
    pub fn config(&self, config: &IndexConfig) -> IndexConfig {
        match self.live() {
            Some(live) => config.clone().watched_by(live),
            None => config.clone(),
        }
    }

    /// Builds the index of `root` on a thread of its own: kept live by a
    /// share of the project's `watch`, or if there is none or it cannot
    /// follow every folder (inotify's limits), built once and checked
    /// against each file's stat.
    pub fn build(
        self: &Arc<Self>,
        root: &Arc<ProjectRoot>,
        config: IndexConfig,
        watch: Option<ProjectWatch>,
    ) {
        let (root, job) = (root.clone(), self.clone());
        let started = Instant::now();
        let spawned = std::thread::Builder::new()
            .name("corral-index".into())
            .spawn(move || {
                let live = watch.as_ref().map(|watch| {
                    LiveIndex::with_watch(&root, &config, watch).and_then(|live| {
                        *lock(&job.live) = Some(live.clone());
                        live.build(&job.progress)
                    })
                });
                let built = match live {
                    Some(Ok(())) => Ok(()),
                    Some(Err(e)) => {
                        eprintln!("corral: {}", e.message);
                        *lock(&job.live) = None;
                        corral_tools::search::build_index(&root, &config, &job.progress)
                    }
                    None => corral_tools::search::build_index(&root, &config, &job.progress),
                };
                let status = match built {
                    Ok(()) => IndexStatus::Ready {
                        files: job.progress.listed.load(Relaxed) as u64,
                        ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
                    },
                    Err(e) => IndexStatus::Failed { message: e.message },
                };
                *lock(&job.done) = Some(status);
            });
        if let Err(e) = spawned {
            *lock(&self.done) = Some(IndexStatus::Failed {
                message: format!("no thread could build it: {e}"),
            });
        }
    }
}
