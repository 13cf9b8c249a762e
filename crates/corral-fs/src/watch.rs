//! The project watch: one inotify instance per open project, its events
//! handed to every part that follows the disk (the file tree, the live
//! search index).
//!
//! Each part subscribes and watches the folders it cares about (each
//! folder on its own, not recursively; a folder two parts watch is one
//! inotify watch). An event goes to every subscriber that watches the
//! folder it names, or the named folder itself, with only those of its
//! paths: what the part's own instance would have seen. An event without
//! a path (lost events: the kernel's queue overflowed) goes to all.
//!
//! One instance delivers its events in order, on one thread: a part that
//! handles them on that thread (the index's barrier) knows that once the
//! event of a file it made is in, every change made before is in too.
//! Subscribers are called on that thread and must not block it.
//!
//! The watches end when the last handle ([`ProjectWatch`] or
//! [`Subscription`]) is dropped; a subscription dropped stops its
//! deliveries at once.
//!
//! ```
//! use corral_fs::watch::ProjectWatch;
//! use std::sync::mpsc;
//!
//! let dir = tempfile::tempdir()?;
//! let watch = ProjectWatch::new()?;
//! let (tx, rx) = mpsc::channel();
//! let tree = watch.subscribe(move |event| {
//!     let _ = tx.send(event);
//! });
//! tree.watch(dir.path())?;
//! std::fs::write(dir.path().join("new.txt"), "")?;
//! let event = rx.recv_timeout(std::time::Duration::from_secs(10))??;
//! assert!(event.paths.iter().any(|p| p.ends_with("new.txt")));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub use notify::{event, Error, Event, EventKind};
use notify::{RecommendedWatcher, RecursiveMode, Watcher};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// What a subscriber is handed: an event, or the news that events were
/// lost.
pub type Delivery = notify::Result<Event>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One project's inotify instance.
#[derive(Clone)]
pub struct ProjectWatch {
    shared: Arc<Shared>,
}

struct Shared {
    watcher: Mutex<RecommendedWatcher>,
    /// Read by the watcher's thread for each event.
    subscribers: Arc<Mutex<Vec<Arc<Subscriber>>>>,
}

type Deliver = Box<dyn Fn(Delivery) + Send + Sync>;

struct Subscriber {
    /// The folders it watches (absolute, as it named them).
    folders: Mutex<HashSet<PathBuf>>,
    deliver: Deliver,
}

impl Subscriber {
    /// The part of `event` this subscriber's own watch would have seen.
    fn share(&self, event: &Delivery) -> Option<Delivery> {
        let event = match event {
            Ok(event) => event,
            Err(e) => {
                let mut lost = Error::generic(&e.to_string());
                lost.paths.clone_from(&e.paths);
                return Some(Err(lost));
            }
        };
        if event.paths.is_empty() {
            return Some(Ok(event.clone()));
        }
        let folders = lock(&self.folders);
        let paths: Vec<PathBuf> = event
            .paths
            .iter()
            .filter(|p| folders.contains(*p) || p.parent().is_some_and(|f| folders.contains(f)))
            .cloned()
            .collect();
        drop(folders);
        if paths.is_empty() {
            return None;
        }
        let mut mine = event.clone();
        mine.paths = paths;
        Some(Ok(mine))
    }
}

impl ProjectWatch {
    /// A new inotify instance, watching nothing yet.
    pub fn new() -> Result<ProjectWatch, Error> {
        let subscribers: Arc<Mutex<Vec<Arc<Subscriber>>>> = Arc::default();
        let handler = {
            let subscribers = subscribers.clone();
            move |event: Delivery| {
                // Called without the list's lock held: a subscriber may
                // take its own locks, and one that is adding a watch holds
                // them while the watcher's thread answers it.
                let now: Vec<Arc<Subscriber>> = lock(&subscribers).clone();
                for subscriber in now {
                    if let Some(share) = subscriber.share(&event) {
                        (subscriber.deliver)(share);
                    }
                }
            }
        };
        let watcher = RecommendedWatcher::new(handler, notify::Config::default())?;
        Ok(ProjectWatch {
            shared: Arc::new(Shared {
                watcher: Mutex::new(watcher),
                subscribers,
            }),
        })
    }

    /// Starts handing `deliver` the events of the folders the returned
    /// subscription watches, on the watcher's thread.
    pub fn subscribe(&self, deliver: impl Fn(Delivery) + Send + Sync + 'static) -> Subscription {
        let me = Arc::new(Subscriber {
            folders: Mutex::default(),
            deliver: Box::new(deliver),
        });
        lock(&self.shared.subscribers).push(me.clone());
        Subscription {
            shared: self.shared.clone(),
            me,
        }
    }
}

/// One part's share of a [`ProjectWatch`].
pub struct Subscription {
    shared: Arc<Shared>,
    me: Arc<Subscriber>,
}

impl Subscription {
    /// Watches `folder` (not recursively) for this subscriber. Watching it
    /// again (it may have been removed and made anew) renews the watch.
    pub fn watch(&self, folder: &Path) -> Result<(), Error> {
        // Noted first: an event that comes as soon as the watch begins is
        // already this subscriber's.
        let new = lock(&self.me.folders).insert(folder.to_path_buf());
        let watched = lock(&self.shared.watcher).watch(folder, RecursiveMode::NonRecursive);
        if watched.is_err() && new {
            lock(&self.me.folders).remove(folder);
        }
        watched
    }

    /// The watch this is a share of.
    pub fn project_watch(&self) -> ProjectWatch {
        ProjectWatch {
            shared: self.shared.clone(),
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        lock(&self.shared.subscribers).retain(|s| !Arc::ptr_eq(s, &self.me));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::disallowed_methods)]
    use super::*;
    use notify::event::{CreateKind, ModifyKind, RenameMode};

    fn subscriber(folders: &[&str]) -> Subscriber {
        Subscriber {
            folders: Mutex::new(folders.iter().map(PathBuf::from).collect()),
            deliver: Box::new(|_| {}),
        }
    }

    fn event(kind: EventKind, paths: &[&str]) -> Delivery {
        let mut event = Event::new(kind);
        event.paths = paths.iter().map(PathBuf::from).collect();
        Ok(event)
    }

    fn paths(share: Option<Delivery>) -> Option<Vec<PathBuf>> {
        share.map(|d| d.unwrap().paths)
    }

    #[test]
    fn a_subscriber_gets_the_events_of_the_folders_it_watches_only() {
        let tree = subscriber(&["/p", "/p/src"]);
        let create = EventKind::Create(CreateKind::File);
        assert_eq!(
            paths(tree.share(&event(create, &["/p/src/a.rs"]))),
            Some(vec!["/p/src/a.rs".into()])
        );
        // The watched folder itself (moved, removed, its metadata).
        assert_eq!(
            paths(tree.share(&event(create, &["/p/src"]))),
            Some(vec!["/p/src".into()])
        );
        assert_eq!(paths(tree.share(&event(create, &["/p/.hidden/a"]))), None);
        assert_eq!(paths(tree.share(&event(create, &["/p/src/deep/a"]))), None);
        // A rename out of a watched folder: only the side it watches.
        let rename = EventKind::Modify(ModifyKind::Name(RenameMode::Both));
        assert_eq!(
            paths(tree.share(&event(rename, &["/p/src/a.rs", "/elsewhere/a.rs"]))),
            Some(vec!["/p/src/a.rs".into()])
        );
    }

    #[test]
    fn lost_events_reach_every_subscriber() {
        let index = subscriber(&[]);
        let lost = Err(Error::generic("queue overflow"));
        assert!(index.share(&lost).unwrap().is_err());
        let rescan = event(EventKind::Other, &[]);
        assert_eq!(paths(index.share(&rescan)), Some(vec![]));
    }
}
