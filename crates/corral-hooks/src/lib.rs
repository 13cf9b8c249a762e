//! Hooks, in Claude Code's settings format: commands the user set to run
//! at the agent's events (before and after a tool call, on a prompt, at
//! the end of a turn, at the start of a session, before a compaction).
//!
//! - `settings`: the `hooks` of `.claude/settings.json`,
//!   `.claude/settings.local.json` and the user's `~/.claude/settings.json`;
//! - `names`: Claude's tool names and input fields (`Bash`,
//!   `tool_input.command`) and Corral's, both ways, so Claude's examples
//!   work unchanged;
//! - `run`: one hook in the sandbox's build profile (no network), its
//!   JSON on stdin, with a time limit, and what its exit code and stdout
//!   say (a hook that could not run is a failure, never a block);
//! - `user_view`: what a user's own hook sees of `~/.claude/` (its
//!   scripts read-only, its log files writable); a project's sees no home;
//! - [`run_event`]: every matching hook of an event, their outcomes joined.

mod names;
mod run;
mod settings;
mod user_view;

pub use names::{claude_input, claude_name, corral_input};
pub use run::{run_event, EventInput, HookRun, Outcome, Verdict};
pub use settings::{Event, Hook, HookSet, Source, Untrusted, PROJECT_SETTINGS};
