//! What is running that a Stop can reach: model streams and commands, by
//! the run id their caller gave. The app, `corral-cli exec` and
//! `corral-cli acp` each hold one, so `cancel(run_id)` means the same in
//! every host.

use corral_tools::shell::CancelToken;
use corral_tools::Error;
use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard, PoisonError};
use tokio_util::sync::CancellationToken;

/// Something running that [`Runs::cancel`] can stop.
#[derive(Clone)]
pub enum Run {
    Shell(CancelToken),
    Llm(CancellationToken),
}

impl Run {
    fn cancel(&self) {
        match self {
            Run::Shell(token) => token.cancel(),
            Run::Llm(token) => token.cancel(),
        }
    }
}

/// How many early cancels are remembered.
const EARLY_CANCELS: usize = 64;

#[derive(Default)]
pub struct Runs {
    running: Mutex<HashMap<String, Run>>,
    /// Run ids cancelled before they started (a Stop that overtook its
    /// run on the way in); the newest few are remembered.
    early: Mutex<VecDeque<String>>,
}

/// A poisoned lock only means another thread panicked mid-update; the
/// maps are still usable.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Runs {
    /// Registers a run so `cancel` can reach it. A run id in use is
    /// refused; one cancelled before it started starts cancelled.
    pub fn start(&self, run_id: &str, run: Run) -> Result<(), Error> {
        let mut running = lock(&self.running);
        if running.contains_key(run_id) {
            return Err(Error::invalid_input(format!(
                "run id `{run_id}` is already running"
            )));
        }
        let mut early = lock(&self.early);
        if let Some(at) = early.iter().position(|id| id == run_id) {
            early.remove(at);
            run.cancel();
        }
        running.insert(run_id.to_string(), run);
        Ok(())
    }

    pub fn end(&self, run_id: &str) {
        lock(&self.running).remove(run_id);
    }

    /// Cancels a run; an unknown or finished run is not an error. A run
    /// id not started yet is remembered, and that run starts cancelled.
    pub fn cancel(&self, run_id: &str) {
        let running = lock(&self.running);
        match running.get(run_id) {
            Some(run) => run.cancel(),
            None => {
                let mut early = lock(&self.early);
                if early.len() == EARLY_CANCELS {
                    early.pop_front();
                }
                early.push_back(run_id.to_string());
            }
        }
    }

    /// Cancels every run.
    pub fn cancel_all(&self) {
        for run in lock(&self.running).values() {
            run.cancel();
        }
    }

    /// How many are running.
    pub fn len(&self) -> usize {
        lock(&self.running).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancel_reaches_its_run_and_one_that_overtook_it() {
        let runs = Runs::default();
        let running = CancellationToken::new();
        runs.start("a", Run::Llm(running.clone())).unwrap();
        runs.cancel("a");
        assert!(running.is_cancelled());

        runs.cancel("b");
        let late = CancellationToken::new();
        runs.start("b", Run::Llm(late.clone())).unwrap();
        assert!(late.is_cancelled(), "a run cancelled before it started ran");
        let other = CancellationToken::new();
        runs.start("c", Run::Llm(other.clone())).unwrap();
        assert!(!other.is_cancelled());
    }

    #[test]
    fn a_run_id_in_use_is_refused_and_free_again_once_ended() {
        let runs = Runs::default();
        runs.start("a", Run::Shell(CancelToken::default())).unwrap();
        let error = runs
            .start("a", Run::Shell(CancelToken::default()))
            .unwrap_err();
        assert_eq!(error.code, corral_tools::ErrorCode::InvalidInput);
        assert_eq!(runs.len(), 1);
        runs.end("a");
        assert!(runs.is_empty());
        runs.start("a", Run::Shell(CancelToken::default())).unwrap();
    }
}
