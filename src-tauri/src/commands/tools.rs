//! One command per tool, named as the tool, taking the tool's input fields
//! (snake_case) plus the user's approval token.

use crate::state::{AppState, Run};
use corral_tools::shell::{CancelToken, ShellRun, Stream};
use corral_tools::Error;
use serde::Serialize;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex, PoisonError};
use tauri::ipc::Channel;
use tauri::State;

type Output = Result<Value, Error>;

#[tauri::command(rename_all = "snake_case")]
pub async fn read_file(
    state: State<'_, AppState>,
    path: String,
    start_line: Option<usize>,
    end_line: Option<usize>,
    approval: Option<String>,
) -> Output {
    let input = json!({"path": path, "start_line": start_line, "end_line": end_line});
    state
        .call_tool("read_file", input, approval, ShellRun::default())
        .await
}

#[tauri::command(rename_all = "snake_case")]
pub async fn write_file(
    state: State<'_, AppState>,
    path: String,
    content: String,
    approval: Option<String>,
) -> Output {
    let input = json!({"path": path, "content": content});
    state
        .call_tool("write_file", input, approval, ShellRun::default())
        .await
}

#[tauri::command(rename_all = "snake_case")]
pub async fn edit_file(
    state: State<'_, AppState>,
    path: String,
    old_string: String,
    new_string: String,
    replace_all: Option<bool>,
    approval: Option<String>,
) -> Output {
    let input = json!({"path": path, "old_string": old_string, "new_string": new_string,
        "replace_all": replace_all});
    state
        .call_tool("edit_file", input, approval, ShellRun::default())
        .await
}

#[tauri::command(rename_all = "snake_case")]
pub async fn delete_file(
    state: State<'_, AppState>,
    path: String,
    approval: Option<String>,
) -> Output {
    let input = json!({"path": path});
    state
        .call_tool("delete_file", input, approval, ShellRun::default())
        .await
}

#[tauri::command(rename_all = "snake_case")]
pub async fn list_directory(
    state: State<'_, AppState>,
    path: Option<String>,
    depth: Option<u8>,
    approval: Option<String>,
) -> Output {
    let input = json!({"path": path, "depth": depth});
    state
        .call_tool("list_directory", input, approval, ShellRun::default())
        .await
}

#[tauri::command(rename_all = "snake_case")]
pub async fn glob(
    state: State<'_, AppState>,
    pattern: String,
    path: Option<String>,
    approval: Option<String>,
) -> Output {
    let input = json!({"pattern": pattern, "path": path});
    state
        .call_tool("glob", input, approval, ShellRun::default())
        .await
}

#[allow(clippy::too_many_arguments)]
#[tauri::command(rename_all = "snake_case")]
pub async fn search_files(
    state: State<'_, AppState>,
    query: String,
    regex: Option<bool>,
    case_insensitive: Option<bool>,
    glob: Option<String>,
    path: Option<String>,
    max_results: Option<usize>,
    approval: Option<String>,
) -> Output {
    let input = json!({"query": query, "regex": regex, "case_insensitive": case_insensitive,
        "glob": glob, "path": path, "max_results": max_results});
    state
        .call_tool("search_files", input, approval, ShellRun::default())
        .await
}

/// A chunk of live command output, as the panel receives it.
#[derive(Debug, Clone, Serialize)]
pub struct ShellEvent {
    pub stream: Stream,
    /// Lossy UTF-8 of the chunk; ANSI escapes are kept for the panel to render.
    pub data: String,
}

#[allow(clippy::too_many_arguments)]
#[tauri::command(rename_all = "snake_case")]
pub async fn exec_shell(
    state: State<'_, AppState>,
    command: String,
    args: Option<Vec<String>>,
    timeout_secs: Option<u64>,
    approval: Option<String>,
    run_id: String,
    on_output: Channel<ShellEvent>,
) -> Output {
    let input = json!({"command": command, "args": args, "timeout_secs": timeout_secs});
    run_shell(&state, input, approval, &run_id, on_output).await
}

/// `exec_shell` with its output streamed to `channel` and cancellable by `run_id`.
async fn run_shell(
    state: &AppState,
    input: Value,
    approval: Option<String>,
    run_id: &str,
    channel: Channel<ShellEvent>,
) -> Output {
    let cancel = CancelToken::default();
    state.start_run(run_id, Run::Shell(cancel.clone()))?;
    let live = Mutex::new(LiveOutput::default());
    let sink = Arc::new(move |stream: Stream, bytes: &[u8]| {
        let mut live = live.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(event) = live.next(stream, bytes) {
            // A closed window cannot receive; the run goes on and is returned.
            let _ = channel.send(event);
        }
    });
    let run = ShellRun {
        cancel,
        on_output: Some(sink),
        ..ShellRun::default()
    };
    let result = state.call_tool("exec_shell", input, approval, run).await;
    state.end_run(run_id);
    result
}

/// Most bytes of one run's output streamed to the window; the result keeps
/// the head and tail of each stream whatever was streamed. 100 MB of output
/// must not become 100 MB of strings in the webview.
pub const LIVE_OUTPUT_LIMIT: usize = 8 * 1024 * 1024;

/// One run's live output: decoded per stream, cut after [`LIVE_OUTPUT_LIMIT`]
/// with one last event saying so.
#[derive(Debug, Default)]
struct LiveOutput {
    decoders: [Utf8Stream; 2],
    sent: usize,
    stopped: bool,
}

impl LiveOutput {
    fn next(&mut self, stream: Stream, bytes: &[u8]) -> Option<ShellEvent> {
        if self.stopped {
            return None;
        }
        if self.sent + bytes.len() > LIVE_OUTPUT_LIMIT {
            self.stopped = true;
            let data = format!(
                "\n[live output stopped after {} MiB; the result keeps the first and last {} KiB of each stream]\n",
                LIVE_OUTPUT_LIMIT / (1024 * 1024),
                corral_tools::shell::HEAD_BYTES / 1024
            );
            return Some(ShellEvent { stream, data });
        }
        self.sent += bytes.len();
        let data = self.decoders[matches!(stream, Stream::Stderr) as usize].push(bytes);
        (!data.is_empty()).then_some(ShellEvent { stream, data })
    }
}

/// Decodes a byte stream chunk by chunk without breaking a UTF-8 character
/// split between two chunks (invalid bytes still become U+FFFD).
#[derive(Debug, Default)]
pub struct Utf8Stream {
    pending: Vec<u8>,
}

impl Utf8Stream {
    /// The text of `bytes`, holding back an incomplete character at the end.
    pub fn push(&mut self, bytes: &[u8]) -> String {
        self.pending.extend_from_slice(bytes);
        let keep = incomplete_tail(&self.pending);
        let ready: Vec<u8> = self.pending.drain(..self.pending.len() - keep).collect();
        String::from_utf8_lossy(&ready).into_owned()
    }
}

/// How many bytes at the end start a UTF-8 character that is not complete yet.
fn incomplete_tail(bytes: &[u8]) -> usize {
    for back in 1..=bytes.len().min(3) {
        let byte = bytes[bytes.len() - back];
        if byte & 0b1100_0000 != 0b1000_0000 {
            let needed = match byte {
                0xC0..=0xDF => 2,
                0xE0..=0xEF => 3,
                0xF0..=0xF7 => 4,
                _ => 1,
            };
            return if needed > back { back } else { 0 };
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::Utf8Stream;

    #[test]
    fn characters_split_between_chunks_stay_whole() {
        let text = "héllo 🦀 wörld";
        let bytes = text.as_bytes();
        for split in 0..bytes.len() {
            let mut decoder = Utf8Stream::default();
            let joined = decoder.push(&bytes[..split]) + &decoder.push(&bytes[split..]);
            assert_eq!(joined, text, "split at {split}");
        }
        // One byte at a time too.
        let mut decoder = Utf8Stream::default();
        let joined: String = bytes.iter().map(|b| decoder.push(&[*b])).collect();
        assert_eq!(joined, text);
    }

    #[test]
    fn invalid_bytes_still_come_through_as_replacement() {
        let mut decoder = Utf8Stream::default();
        assert_eq!(decoder.push(b"a\xffb"), "a\u{FFFD}b");
    }
}
