//! One language server as Corral uses it: started on a thread of its own,
//! initialized, told of the documents it should check, and asked.

use crate::link::{Link, Missed, Phase, Published, METHOD_NOT_FOUND};
use crate::pull::{self, Pull};
use crate::{Launch, ServerSpec};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// How long a server may take to answer `initialize` before it is
/// stopped (a caller never waits this long: it waits for its own cap).
const INITIALIZE_TIMEOUT: Duration = Duration::from_secs(60);

/// A document the server has open: its version and a hash of its text.
struct Doc {
    version: i32,
    text: u64,
}

pub(crate) struct Server {
    pub spec: ServerSpec,
    pub link: Arc<Link>,
    docs: Mutex<HashMap<String, Doc>>,
    last_used: Mutex<Instant>,
    /// The calls using it now: a server waited on is not idle, however
    /// long its start takes.
    users: AtomicUsize,
    /// When it was found dead (a crashed server is restarted only after a
    /// pause, so a server that dies at once is not started at every call).
    pub died: Mutex<Option<Instant>>,
    /// It answered `textDocument/diagnostic` with "no such method".
    pull_refused: AtomicBool,
}

impl Server {
    /// Starts `spec` for the project at `root`; returns at once.
    pub(crate) fn start(spec: ServerSpec, root: &Path, launch: &dyn Launch) -> Arc<Server> {
        let link = Link::new(spec.name());
        let server = Arc::new(Server {
            spec: spec.clone(),
            link: link.clone(),
            docs: Mutex::new(HashMap::new()),
            last_used: Mutex::new(Instant::now()),
            users: AtomicUsize::new(0),
            died: Mutex::new(None),
            pull_refused: AtomicBool::new(false),
        });
        let launched = launch.command(&spec);
        let params = initialize_params(root);
        let name = format!("lsp-{}", spec.name());
        let spawned = thread::Builder::new().name(name).spawn({
            let link = link.clone();
            move || match launched {
                Ok(launched) => {
                    let crate::Launched { command, guard } = launched;
                    link.run(command, move |link| initialize(&link, params));
                    drop(guard);
                }
                Err(e) => link.end(e.message),
            }
        });
        if let Err(e) = spawned {
            link.end(format!("no thread for the server: {e}"));
        }
        server
    }

    pub(crate) fn touch(&self) {
        *lock(&self.last_used) = Instant::now();
    }

    /// How long it has not been used; `None` while a call uses it.
    pub(crate) fn idle_for(&self) -> Option<Duration> {
        (self.users.load(Ordering::SeqCst) == 0).then(|| lock(&self.last_used).elapsed())
    }

    /// Marks it in use until the guard is dropped.
    pub(crate) fn in_use(&self) -> InUse<'_> {
        self.users.fetch_add(1, Ordering::SeqCst);
        self.touch();
        InUse(self)
    }

    /// Asks the server to shut down, then kills what is left.
    pub(crate) fn stop(&self, why: &str) {
        if self.link.phase() == Phase::Ready {
            let deadline = Instant::now() + Duration::from_millis(500);
            let _ = self.link.request("shutdown", Value::Null, deadline);
            let _ = self.link.notify("exit", Value::Null);
        }
        self.link.kill(why);
    }

    /// Tells the server the document's text (`None`: it was deleted);
    /// returns its version, and whether the server already has this text.
    pub(crate) fn sync(
        &self,
        uri: &str,
        language_id: &str,
        text: Option<&str>,
    ) -> Result<(i32, bool), Missed> {
        let mut docs = lock(&self.docs);
        let Some(text) = text else {
            if docs.remove(uri).is_some() {
                self.link.notify(
                    "textDocument/didClose",
                    json!({ "textDocument": { "uri": uri } }),
                )?;
            }
            self.link.forget(&crate::key_of(uri));
            return Ok((0, true));
        };
        let hash = hash_of(text);
        match docs.get_mut(uri) {
            Some(doc) if doc.text == hash => Ok((doc.version, true)),
            Some(doc) => {
                doc.version += 1;
                doc.text = hash;
                self.link.notify(
                    "textDocument/didChange",
                    json!({
                        "textDocument": { "uri": uri, "version": doc.version },
                        "contentChanges": [{ "text": text }],
                    }),
                )?;
                Ok((doc.version, false))
            }
            None => {
                self.link.notify(
                    "textDocument/didOpen",
                    json!({ "textDocument": {
                        "uri": uri, "languageId": language_id, "version": 1, "text": text,
                    }}),
                )?;
                docs.insert(
                    uri.to_string(),
                    Doc {
                        version: 1,
                        text: hash,
                    },
                );
                Ok((1, false))
            }
        }
    }

    /// The diagnostics of the document `uri` at `version`: asked for
    /// where the server can be asked ([`Pull`]); else those already
    /// published if the text did not change, or the next ones published.
    pub(crate) fn diagnostics(
        &self,
        uri: &str,
        after: u64,
        (version, unchanged): (i32, bool),
        deadline: Instant,
    ) -> Result<Vec<lsp_types::Diagnostic>, Missed> {
        let key = crate::key_of(uri);
        let way = match Pull::of(&self.link, self.pull_refused.load(Ordering::Relaxed)) {
            // typescript-language-server publishes a newly opened
            // document's diagnostics whatever they are, while a request
            // sent as tsserver still loads the project may go unanswered.
            Pull::TsServer if version == 1 && !unchanged => Pull::Push,
            way => way,
        };
        let pulled = match way {
            Pull::Document => Some(pull::document(&self.link, uri, deadline)),
            Pull::TsServer => Some(pull::tsserver(&self.link, &key, deadline)),
            Pull::Push => None,
        };
        match pulled {
            Some(Ok(items)) => return Ok(items),
            Some(Err(Missed::Refused { code, .. }))
                if way == Pull::Document && code == METHOD_NOT_FOUND =>
            {
                self.pull_refused.store(true, Ordering::Relaxed);
            }
            // Refused for this version (busy, cancelled): its publication
            // may still come.
            Some(Err(Missed::Refused { .. })) | None => {}
            Some(Err(missed)) => return Err(missed),
        }
        if unchanged {
            if let Some(published) = self.link.published(&key) {
                return Ok(published.items);
            }
        }
        let settle = Duration::from_millis(150);
        let after = if unchanged { 0 } else { after };
        self.link
            .wait_published(&key, after, version, settle, deadline)
            .map(|p: Published| p.items)
    }
}

/// A call's use of a server; its end restarts the idle clock.
pub(crate) struct InUse<'a>(&'a Server);

impl Drop for InUse<'_> {
    fn drop(&mut self) {
        self.0.touch();
        self.0.users.fetch_sub(1, Ordering::SeqCst);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

fn hash_of(text: &str) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

/// `initialize` and `initialized`; the link is ready after them. A server
/// that does not answer in time is stopped.
fn initialize(link: &Arc<Link>, params: Value) {
    let deadline = Instant::now() + INITIALIZE_TIMEOUT;
    match link.request("initialize", params, deadline) {
        Ok(answer) => {
            if link.notify("initialized", json!({})).is_ok() {
                link.set_ready(answer["capabilities"].clone());
            }
        }
        Err(Missed::Timeout) => link.kill(&format!(
            "it did not answer `initialize` within {} s",
            INITIALIZE_TIMEOUT.as_secs()
        )),
        Err(Missed::Refused { message, .. }) => link.kill(&message),
        Err(Missed::Dead(_)) => {}
    }
}

/// What Corral tells a server of itself: the project as its one
/// workspace folder, and the few features it uses. No process id: the
/// server runs in a PID namespace where Corral's is not visible, and
/// some servers exit when the id they were given is not alive.
fn initialize_params(root: &Path) -> Value {
    let uri = crate::uri_of(root);
    let name = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    json!({
        "processId": null,
        "clientInfo": { "name": "corral" },
        "rootUri": uri,
        "rootPath": root.display().to_string(),
        "workspaceFolders": [{ "uri": uri, "name": name }],
        "capabilities": {
            "general": { "positionEncodings": ["utf-16"] },
            "textDocument": {
                "synchronization": { "didSave": false, "dynamicRegistration": false },
                "publishDiagnostics": { "versionSupport": true, "relatedInformation": false },
                "diagnostic": { "dynamicRegistration": true, "relatedDocumentSupport": false },
                "hover": { "contentFormat": ["plaintext", "markdown"] },
                "definition": { "linkSupport": false },
                "references": {},
            },
            "workspace": { "configuration": true, "workspaceFolders": true },
            "window": { "workDoneProgress": false },
        },
    })
}
