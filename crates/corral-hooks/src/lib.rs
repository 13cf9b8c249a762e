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
//!   say;
//! - [`run_event`]: every matching hook of an event, their outcomes joined.

mod names;
mod run;
mod settings;

pub use names::{claude_input, claude_name, corral_input};
pub use run::{run_event, EventInput, HookRun, Outcome, Verdict};
pub use settings::{Event, Hook, HookSet, Source, Untrusted, PROJECT_SETTINGS};
