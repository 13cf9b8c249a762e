// Generated from the Rust types by src-tauri/tests/all/wire_types.rs; do not edit.
// After changing a type: UPDATE_WIRE_TYPES=1 cargo test -p corral --test all -- wire_types::

export type ErrorCode = "no_project_open" | "invalid_input" | "not_found" | "already_exists" | "is_directory" | "not_a_directory" | "not_text" | "too_large" | "path_outside_root" | "path_protected" | "approval_required" | "denied" | "permission_denied" | "no_match" | "ambiguous_match" | "stale_file" | "invalid_regex" | "command_not_allowed" | "argument_not_allowed" | "cancelled" | "io" | "llm_auth" | "llm_rate_limited" | "llm_unavailable" | "llm_bad_response" | "llm_context_overflow" | "mcp_server" | "language_server" | "update";

export type WireError = { 
/**
 * Stable machine-readable code.
 */
code: ErrorCode, 
/**
 * One sentence for people and models: what happened, to what.
 */
message: string, 
/**
 * What to do next.
 */
hint: string, 
/**
 * Whether the same call may succeed later.
 */
retryable: boolean, 
/**
 * Structured facts (the path, the matched lines, the argument...).
 */
details: Record<string, unknown>, };

export type Risk = "read" | "write" | "shell";

export type Mode = "read_only" | "ask" | "auto_edit" | "full_auto";

export type PolicyDecision = { "decision": "allow" } | { "decision": "ask", reason: string, } | { "decision": "deny", reason: string, };

export type ToolSpec = { name: string, description: string, input_schema: object, risk: Risk, 
/**
 * How the window shows its calls (never sent to the model).
 */
display: ToolDisplay, };

export type ToolDisplay = { 
/**
 * What a call is about, in a few words on its card.
 */
subject: ToolSubject, 
/**
 * How its result is summed up and previewed.
 */
result: ToolResultView, 
/**
 * The MCP server whose tool it is; none for Corral's own tools.
 */
server?: string, 
/**
 * The tool's own name on its server (the model sees it prefixed with
 * the server's); none for Corral's own tools.
 */
label?: string, };

export type ToolSubject = "path" | "folder" | "command" | "query" | "pattern" | "url" | "arguments";

export type ToolResultView = "file_content" | "written" | "edited" | "deleted" | "entries" | "files" | "matches" | "plan" | "output" | "diagnostics" | "page" | "json";

export type ToolPreview = { 
/**
 * The path as the tool resolves it, relative to the root.
 */
path: string, 
/**
 * The current text; empty for a file that does not exist yet.
 */
before: string, 
/**
 * The text after the call; empty for a deletion.
 */
after: string, 
/**
 * Unified diff from `a/{path}` to `b/{path}`.
 */
diff: string, 
/**
 * The file the preview was computed from ([`base_of`]: a digest of
 * its bytes, or `absent`). Given back with the approved call
 * (the tool layer's `CallContext::base`), the call writes only over
 * those very bytes: if the file changed since, it fails with
 * `stale_file` and writes nothing, so what is written is what was
 * shown.
 */
base: string, };

export type PolicyCheck = { 
/**
 * The would-be change (`write_file`, `edit_file`, `delete_file`);
 * absent for other tools and for a denied call.
 */
preview?: ToolPreview, 
/**
 * Why there is no preview where there would be one: the error the
 * call itself will fail with (an edit that will miss, a binary file).
 */
preview_error?: WireError, 
/**
 * The saved rule that lets the call run without asking (`npm test`).
 */
rule?: string, 
/**
 * The call fetches from the network: approved, it runs in the network
 * profile.
 */
network?: boolean, } & ({ "decision": "allow" } | { "decision": "ask", reason: string, } | { "decision": "deny", reason: string, });

export type ApprovalScope = "once" | "conversation" | "always";

export type Grant = { "kind": "command", command: string, args: Array<string>, more: boolean, } | { "kind": "path", tool: string, path: string, } | { "kind": "folder", tool: string, folder: string, } | { "kind": "call", tool: string, input: Record<string, unknown>, };

export type GrantEntry = { id: string, grant: Grant, };

export type CallCheck = { 
/**
 * The grant of the conversation that made it `allow`.
 */
grant?: GrantEntry, 
/**
 * It asks every time (a secret-like file, the agent's configuration
 * or another program's auto-run file, git writing its own folder):
 * approved one call at a time, never granted for the conversation or
 * saved as a rule.
 */
one_at_a_time?: boolean, 
/**
 * The would-be change (`write_file`, `edit_file`, `delete_file`);
 * absent for other tools and for a denied call.
 */
preview?: ToolPreview, 
/**
 * Why there is no preview where there would be one: the error the
 * call itself will fail with (an edit that will miss, a binary file).
 */
preview_error?: WireError, 
/**
 * The saved rule that lets the call run without asking (`npm test`).
 */
rule?: string, 
/**
 * The call fetches from the network: approved, it runs in the network
 * profile.
 */
network?: boolean, } & ({ "decision": "allow" } | { "decision": "ask", reason: string, } | { "decision": "deny", reason: string, });

export type ResolvedPath = { 
/**
 * As the call gives it.
 */
typed: string, 
/**
 * Relative to the project root (`.` for the root).
 */
inside: string, };

export type Piece = { text: string, mark?: string, };

export type ShownCall = { reason: Array<Piece>, fields: Array<ShownField>, 
/**
 * As the ticket's `paths`: each path as typed and where it leads.
 */
paths: Array<ShownPath>, 
/**
 * The preview's lines before and after the change ([`marked_lines`]):
 * only those with a marker, by 0-based index; a line not listed is
 * drawn as it is.
 */
change?: ShownChange, };

export type ShownField = { 
/**
 * The field's name as the input has it (to find it by).
 */
name: string, 
/**
 * The name, marked.
 */
key: Array<Piece>, 
/**
 * The value: a string as itself, anything else as JSON.
 */
value: Array<Piece>, 
/**
 * For a list of strings, each item on its own.
 */
items?: Array<Array<Piece>>, };

export type ShownPath = { typed: Array<Piece>, inside: Array<Piece>, };

export type ShownChange = { before: Record<number, Array<Piece>>, after: Record<number, Array<Piece>>, };

export type Ticket = { 
/**
 * Its id for [`Session::run`] (the model never sees it).
 */
ticket: string, 
/**
 * For a command: the rule "always allow" would save (`npm test`);
 * none for a command that touches a secret.
 */
proposed_rule?: string, 
/**
 * A PreToolUse hook's `allow` stands for the user's "once" here
 * ([`CallCheck::hook_may_answer`]): the call asks only the mode's
 * question, not one asked every time nor about the network.
 */
hook_may_answer?: boolean, 
/**
 * What "allow in this conversation" may grant ([`grants::choices`]):
 * this very call (its argv, its path or its input); none for a path
 * reached through a link, or a call approved one at a time.
 */
exact_grant?: Grant, 
/**
 * The folders a path grant may widen to, nearest first, ending with
 * `.` (the whole project); only `.` where a link lies on the way.
 */
grant_folders?: Array<string>, 
/**
 * The first part of the call's path that is a link (`vendor/pkg`):
 * neither the file alone nor its folders are offered.
 */
grant_link?: string, 
/**
 * For a command: the pattern proposed for editing, the words the
 * saved rule would take then any further arguments (`npm test *`).
 */
proposed_pattern?: Grant, 
/**
 * For a command: the patterns that cover it (its argv, and its first
 * words then any further arguments, shortest first, within
 * [`grants::PATTERN_WORDS_BYTES`]); an edited pattern is offered only
 * when it is one of them.
 */
covering_patterns?: Array<Grant>, 
/**
 * Where each path the call names leads, as the tool resolves it: the
 * approval shows it beside the path as typed.
 */
paths?: Array<ResolvedPath>, 
/**
 * What a question shows of the call, marked by the core as every
 * host shows it ([`crate::marked`]): sent when the call asks.
 */
shown?: ShownCall, 
/**
 * The grant of the conversation that made it `allow`.
 */
grant?: GrantEntry, 
/**
 * It asks every time (a secret-like file, the agent's configuration
 * or another program's auto-run file, git writing its own folder):
 * approved one call at a time, never granted for the conversation or
 * saved as a rule.
 */
one_at_a_time?: boolean, 
/**
 * The would-be change (`write_file`, `edit_file`, `delete_file`);
 * absent for other tools and for a denied call.
 */
preview?: ToolPreview, 
/**
 * Why there is no preview where there would be one: the error the
 * call itself will fail with (an edit that will miss, a binary file).
 */
preview_error?: WireError, 
/**
 * The saved rule that lets the call run without asking (`npm test`).
 */
rule?: string, 
/**
 * The call fetches from the network: approved, it runs in the network
 * profile.
 */
network?: boolean, } & ({ "decision": "allow" } | { "decision": "ask", reason: string, } | { "decision": "deny", reason: string, });

export type ShellEvent = { stream: Stream, 
/**
 * Lossy UTF-8 of the chunk; ANSI escapes are kept for the panel to render.
 */
data: string, };

export type ApprovalAnswer = { scope: ApprovalScope, network?: boolean, grant?: Grant, rule?: string, };

export type DomainQuestion = { "kind": "asked", id: string, conversation: string, domain: string, } | { "kind": "closed", id: string, };

export type HookEvent = "PreToolUse" | "PostToolUse" | "UserPromptSubmit" | "Stop" | "SessionStart" | "PreCompact";

export type HookVerdict = "none" | "allow" | "ask" | "deny";

export type HookLine = { event: HookEvent, 
/**
 * As written (empty: every tool).
 */
matcher: string, command: string, };

export type UntrustedHooks = { 
/**
 * Relative to the project (`.claude/settings.json`).
 */
file: string, 
/**
 * Its exact text: what `trust_hooks` must be given back.
 */
text: string, 
/**
 * Its hooks, each as it would run.
 */
hooks: Array<HookLine>, };

export type HookStatus = { 
/**
 * The events with at least one hook that runs (the user's, and the
 * project's trusted ones).
 */
events: Array<HookEvent>, 
/**
 * The project's settings files whose hooks wait for the user's trust.
 */
untrusted: Array<UntrustedHooks>, 
/**
 * What could not be read (a file that is not JSON, a bad matcher...).
 */
problems: Array<string>, };

export type HookRequest = { event: HookEvent, 
/**
 * The conversation (the hooks' `session_id`).
 */
conversation?: string, 
/**
 * Corral's name of the tool (tool events).
 */
tool?: string, 
/**
 * The call's input as it would run (tool events).
 */
input?: Record<string, unknown>, 
/**
 * The call's result (`PostToolUse`).
 */
response?: unknown, 
/**
 * The user's prompt (`UserPromptSubmit`).
 */
prompt?: string, 
/**
 * `startup` or `resume` (`SessionStart`); `manual` or `auto` (`PreCompact`).
 */
trigger?: string, 
/**
 * `Stop`: the turn already goes on because a `Stop` hook blocked.
 */
stop_hook_active?: boolean, };

export type HookOutcome = { 
/**
 * `PreToolUse`: allow, ask or deny; `none` when no hook decided.
 */
verdict: HookVerdict, reason?: string, 
/**
 * The command of the hook whose verdict it is.
 */
by?: string, 
/**
 * A hook blocked (exit 2, `"decision": "block"`): what the model is told.
 */
block?: string, 
/**
 * The command of the first hook that blocked.
 */
blocked_by?: string, 
/**
 * `PreToolUse`: the call's input as a hook changed it (Corral's form).
 */
updated_input?: Record<string, unknown>, updated_by?: string, 
/**
 * Context for the model.
 */
context: Array<string>, 
/**
 * `"continue": false`: the turn ends, with this for the user.
 */
stop?: string, 
/**
 * For the user: hooks that failed without blocking.
 */
notices: Array<string>, 
/**
 * The commands that ran, in order.
 */
ran: Array<string>, };

export type Checkpoint = { 
/**
 * Increasing with time; what `diff` and `restore` take.
 */
id: string, 
/**
 * Milliseconds since the Unix epoch.
 */
time: number, 
/**
 * The tool whose call it was taken before (`write_file`, `exec_shell`,
 * ...), `restore` before a restore, `manual` when asked for.
 */
tool: string, 
/**
 * What the call was about: its path, or its command line.
 */
label: string, 
/**
 * The user turn of the call (the app's turn id).
 */
turn?: string, 
/**
 * The tool call (the model's tool-use id).
 */
call_id?: string, 
/**
 * The first checkpoint of its turn: the state before the turn changed anything.
 */
turn_start: boolean, 
/**
 * Files (and links) in the snapshot.
 */
files: number, 
/**
 * What changed since the checkpoint before this one.
 */
files_changed: ChangeCounts, 
/**
 * Files over 64 MiB: recorded, not kept; a restore says so.
 */
too_large: Array<string>, };

export type ChangeCounts = { added: number, modified: number, removed: number, };

export type ChangeStatus = "added" | "modified" | "removed";

export type CheckpointEntryKind = "file" | "symlink" | "dir";

export type FileChange = { 
/**
 * Relative to the project root, `/`-separated.
 */
path: string, status: ChangeStatus, kind: CheckpointEntryKind, 
/**
 * Unified diff of the text (a link's target for a symlink); empty for
 * binary files, files too large to show and folders.
 */
diff: string, 
/**
 * The whole text on each side, when there is a diff (for a viewer that
 * lays out its own); empty for a side that does not exist.
 */
before?: string, after?: string, 
/**
 * Not text: no diff is shown.
 */
binary: boolean, 
/**
 * Text, but its diff was left out: a side over 1 MiB, or the answer's
 * diffs were already long (8 MiB) or slow (3 s).
 */
diff_omitted: boolean, 
/**
 * Over the size limit: not kept, so not shown (nor restorable).
 */
too_large: boolean, 
/**
 * The permission bits before and after, when they differ.
 */
mode_change?: [number, number], };

export type Skipped = { path: string, reason: string, 
/**
 * An entry the ignore rules leave out (on either side): recorded by
 * name, nothing of it kept, so a restore never touches it.
 */
ignored: boolean, };

export type Comparison = { 
/**
 * A checkpoint id, or `current` for the project as it is.
 */
from: string, to: string, 
/**
 * The one path compared, when not the whole project.
 */
path?: string, counts: ChangeCounts, changes: Array<FileChange>, 
/**
 * For a restore: what it will leave as it is, and why.
 */
skipped: Array<Skipped>, };

export type Restored = { 
/**
 * The checkpoint restored.
 */
restored: string, path?: string, 
/**
 * The checkpoint taken just before: restoring it undoes this restore.
 */
undo: string, counts: ChangeCounts, changes: Array<FileChange>, skipped: Array<Skipped>, };

export type CallUndo = { 
/**
 * The checkpoint taken just before the call.
 */
checkpoint: string, 
/**
 * Where the call's changes end: the next checkpoint, or `current` (no
 * checkpoint was taken after it).
 */
until: string, 
/**
 * What the call changed (from `checkpoint` to `until`): what the undo
 * puts back, and nothing else.
 */
paths: Array<string>, 
/**
 * Of those, the ones changed again after `until` (by a later call or by
 * hand): the undo loses those later changes too.
 */
changed_later: Array<string>, 
/**
 * What the undo will change: the project as it is against the
 * checkpoint, for those paths only.
 */
plan: Comparison, };

export type Stream = "stdout" | "stderr";

export type EntryKind = "file" | "dir" | "symlink";

export type DirEntry = { 
/**
 * Relative to the project root.
 */
path: string, kind: EntryKind, 
/**
 * Size in bytes, for files.
 */
size?: number, };

export type ListDirectoryOutput = { path: string, entries: Array<DirEntry>, truncated: boolean, };

export type ReadFileOutput = { path: string, 
/**
 * The lines, with their original line endings (a BOM is not included).
 */
content: string, start_line: number, end_line: number, total_lines: number, 
/**
 * More lines follow `end_line`, or a line was cut.
 */
truncated: boolean, 
/**
 * Where to continue, when truncated.
 */
hint?: string, };

export type ShellOutput = { 
/**
 * The program as given.
 */
command: string, 
/**
 * The arguments as given.
 */
args: Array<string>, 
/**
 * Standard output (lossy UTF-8; head and tail kept past the cap).
 */
stdout: string, 
/**
 * Standard error (lossy UTF-8; head and tail kept past the cap).
 */
stderr: string, 
/**
 * The exit code; `None` when the program was killed by a signal
 * (including the timeout).
 */
exit_code: number | null, 
/**
 * Whether the time limit killed the process group.
 */
timed_out: boolean, 
/**
 * Wall time from spawn to the end of output.
 */
duration_ms: number, 
/**
 * Bytes of stdout dropped from the middle.
 */
stdout_truncated_bytes: number, 
/**
 * Bytes of stderr dropped from the middle.
 */
stderr_truncated_bytes: number, 
/**
 * The profile the command ran in.
 */
profile: Profile, 
/**
 * What fenced it in.
 */
sandbox: Sandbox, 
/**
 * Whether any sandbox was applied (`sandbox` is not `none`).
 */
sandboxed: boolean, 
/**
 * What could not be applied, and why (absent when the whole profile
 * was enforced).
 */
sandbox_note?: string, 
/**
 * The command failed and its output shows the sandbox refused a
 * connection or a name lookup (it ran without the network), or the
 * egress proxy refused a domain or an address: what happened and how
 * to allow it.
 */
network_refused?: string, 
/**
 * A limit the command hit (processes, memory, file size); the note
 * says which and how much.
 */
limit_hit?: Limit, };

export type StepStatus = "pending" | "in_progress" | "completed";

export type PlanStep = { 
/**
 * What to do, in a short sentence.
 */
step: string, status: StepStatus, };

export type UpdatePlanOutput = { steps: Array<PlanStep>, completed: number, total: number, };

export type Severity = "error" | "warning";

export type Diagnostic = { 
/**
 * 1-based line.
 */
line: number, 
/**
 * 1-based column, in UTF-16 units as servers count (characters, for
 * ASCII text).
 */
column: number, severity: Severity, message: string, 
/**
 * Who reported it (`ts`, `Pyright`, `rustc`...).
 */
source?: string, 
/**
 * The server's code for it (`2322`, `reportAttributeAccessIssue`).
 */
code?: string, };

export type FileDiagnostics = { 
/**
 * The path relative to the project root.
 */
path: string, 
/**
 * How many errors the server reported (also those left out).
 */
errors: number, 
/**
 * How many warnings the server reported (also those left out).
 */
warnings: number, 
/**
 * The diagnostics shown, errors first.
 */
diagnostics: Array<Diagnostic>, };

export type DiagnosticsReport = { 
/**
 * Each file a server answered for, clean ones too.
 */
files: Array<FileDiagnostics>, 
/**
 * Diagnostics left out to keep the report short.
 */
omitted?: number, 
/**
 * What is missing and why: a server that is not installed, still
 * starting past the wait, crashed or did not answer.
 */
notes?: Array<string>, };

export type Profile = "read_only" | "build" | "network";

export type Sandbox = "namespaces" | "landlock" | "none";

export type Limit = "processes" | "memory" | "file_size" | "disk";

export type SavedRule = { program: string, args: Array<string>, };

export type ShellConfig = { builtin: Array<string>, global_programs: Array<string>, project_programs: Array<string>, rules: Array<SavedRule>, };

export type SandboxLimits = { 
/**
 * Processes (and threads) one command may have at once.
 */
processes: number, 
/**
 * Memory of one command, in bytes.
 */
memory_bytes: number, 
/**
 * The largest file one command may write, in bytes.
 */
file_size_bytes: number, 
/**
 * Files one command may have open at once.
 */
open_files: number, 
/**
 * What a command's TMPDIR and its `/tmp` may hold, each, in bytes.
 */
tmp_bytes: number, 
/**
 * Processes all commands of the app may have at once.
 */
budget_processes: number, 
/**
 * Memory all commands of the app share, in bytes; `null` where the
 * machine's memory could not be read (no budget below it).
 */
budget_memory_bytes: number | null, 
/**
 * What Corral's package caches, shared by every project, may hold,
 * in bytes.
 */
caches_bytes: number, };

export type McpServerConfig = { 
/**
 * Letters, digits, `-` and `_`; its tools reach the model as
 * `NAME__TOOL`.
 */
name: string, 
/**
 * The program: a name looked up in the system folders, or an absolute
 * path outside the project (empty for a server at a URL).
 */
command: string, 
/**
 * A server reached over streamable HTTP instead of a program
 * (`http://` or `https://`); a variable named `BEARER_TOKEN` is sent
 * as `Authorization: Bearer <value>`.
 */
url?: string, args: Array<string>, 
/**
 * The names of the environment variables it gets; their values are
 * secrets (see [`McpSettings::secrets`]).
 */
env: Array<string>, 
/**
 * Runs with the network (a server for an online service needs it).
 */
network: boolean, 
/**
 * Starts in the project folder instead of a private one. The
 * project's files can then choose what a launcher runs (`npx` prefers
 * the project's `node_modules`), so only for servers that need it.
 */
in_project: boolean, 
/**
 * Its calls run without asking.
 */
trusted: boolean, 
/**
 * Tools that only read: they run without asking.
 */
read_only_tools: Array<string>, 
/**
 * How long one call may take (default 120 s).
 */
timeout_secs?: number, };

export type McpSettings = { servers: Array<McpServerConfig>, secrets: { [key in string]?: { [key in string]?: string } }, };

export type McpSettingsView = { servers: Array<McpServerConfig>, 
/**
 * `server/VAR` of each variable that has a value.
 */
secrets_set: Array<string>, };

export type McpState = "starting" | "running" | "failed" | "stopped";

export type McpServerStatus = { name: string, state: McpState, 
/**
 * Its tools by their own names on the server (the model calls them
 * `SERVER__TOOL`; "read-only tools" takes these names).
 */
tools: Array<string>, 
/**
 * Why it failed, or the tools it offered that were left out.
 */
problems?: Array<string>, 
/**
 * The newest 16 KiB of what it wrote to stderr.
 */
stderr: string, };

export type IndexStatus = { "state": "building", listed: number, indexed: number, } | { "state": "ready", files: number, ms: number, } | { "state": "failed", message: string, };

export type TreeChanges = { 
/**
 * The newest batch; pass it back as `since` next time.
 */
counter: number, 
/**
 * Folders (relative to the root, `"."` for the root) whose entries
 * changed after `since`.
 */
folders: Array<string>, 
/**
 * `since` is too old (or from another project): re-list every folder.
 */
all: boolean, };

export type SetupSource = "project" | "user" | "codex";

export type CommandFile = { source: SetupSource, 
/**
 * Its path below its commands folder, `/`-separated (`tracker/fix-bug.md`):
 * the name comes from it.
 */
relative: string, 
/**
 * Where it is, as the user knows it (`.claude/commands/x.md` for the
 * project's, an absolute path for the user's).
 */
path: string, text: string, };

export type SkillFolder = { source: SetupSource, 
/**
 * The folder's name, what [`skill_file`] finds it by.
 */
folder: string, 
/**
 * Where its `SKILL.md` is, as the user knows it.
 */
path: string, 
/**
 * The `SKILL.md`'s text whole: the loop sends the model its name and
 * description, and the rest only when the model loads the skill.
 */
text: string, 
/**
 * The folder's other files, relative to it, `/`-separated, sorted (at
 * most [`MAX_SKILL_FILES`]).
 */
files: Array<string>, };

export type Customization = { commands: Array<CommandFile>, skills: Array<SkillFolder>, 
/**
 * What could not be read, one line each.
 */
problems: Array<string>, 
/**
 * Claude Code's tool names and Corral's (`Bash`: `exec_shell`), the
 * hooks' table ([`corral_hooks::claude_name`]): a subagent's file
 * written for Claude names its tools by them.
 */
claude_tools?: { [key in string]?: string }, };

export type SkillFile = { 
/**
 * Where it is, as the user knows it.
 */
path: string, content: string, };

export type Notice = "finished" | "approval";

export type Started = { 
/**
 * Read its output with `command_output`, stop it with `stop_command`.
 */
run_id: string, command: string, args: Array<string>, };

export type ListeningPort = { port: number, 
/**
 * Where the window (or a browser) reaches it on 127.0.0.1: the same
 * port, or another when the host's was taken; absent when it could
 * not be forwarded out of the command's sandbox.
 */
reach_at?: number, };

export type CommandOutput = { run_id: string, command: string, args: Array<string>, 
/**
 * stdout and stderr as they arrived, from `since_byte` (lossy UTF-8,
 * at most 64 KiB).
 */
output: string, 
/**
 * Ask from here next time.
 */
next_byte: number, 
/**
 * Bytes before this offset were dropped (only the newest 1 MiB is kept).
 */
first_kept_byte: number, running: boolean, 
/**
 * Set once it ended.
 */
exit_code?: number, 
/**
 * It was stopped (by `stop_command`, the project closing, or its time limit).
 */
stopped: boolean, 
/**
 * Why it could not run or ended with an error.
 */
error?: string, 
/**
 * Once it ended, what the sandbox says of the run, as a command's
 * result says it (a file another program runs by itself that it
 * made, removed; a limit it hit).
 */
sandbox_note?: string, elapsed_ms: number, 
/**
 * The ports it listens on while it runs.
 */
ports: Array<ListeningPort>, };

export type Role = "user" | "assistant";

export type Block = { "type": "text", 
/**
 * The text.
 */
text: string, } | { "type": "tool_use", 
/**
 * The provider's call id; [`Block::ToolResult::tool_use_id`] refers to it.
 */
id: string, 
/**
 * The tool's name.
 */
name: string, 
/**
 * The tool's input object.
 */
input: Record<string, unknown>, } | { "type": "tool_result", 
/**
 * The id of the [`Block::ToolUse`] this answers.
 */
tool_use_id: string, 
/**
 * The result as text (tool output or the standardized error's JSON).
 */
content: string, 
/**
 * Whether the call failed.
 */
is_error?: boolean, } | { "type": "image", 
/**
 * The image's MIME type: one of [`IMAGE_TYPES`].
 */
media_type: string, 
/**
 * The image's bytes, base64 (standard alphabet, padded).
 */
data: string, };

export type Message = { 
/**
 * Who wrote it.
 */
role: Role, 
/**
 * What it says, in order.
 */
content: Array<Block>, };

export type LlmTool = { 
/**
 * The tool's name (what the model calls).
 */
name: string, 
/**
 * What the tool does, for the model.
 */
description: string, 
/**
 * The JSON Schema of the tool's input object.
 */
input_schema: object, };

export type LlmRequest = { 
/**
 * The system prompt; empty for none.
 */
system: string, 
/**
 * The conversation so far, oldest first.
 */
messages: Array<Message>, 
/**
 * The tools the model may call; empty for none.
 */
tools: Array<LlmTool>, 
/**
 * The most tokens this reply may use when that is less than the
 * settings' max tokens (the caller keeps request and reply inside the
 * context window); `None` for the settings' value.
 */
max_tokens?: number, };

export type LlmEvent = { "type": "text_delta", 
/**
 * The new text.
 */
text: string, } | { "type": "reasoning_delta", 
/**
 * The new text.
 */
text: string, } | { "type": "tool_call_start", 
/**
 * The call id (the provider's, or `call_<n>` when it gave none).
 */
id: string, 
/**
 * The tool's name.
 */
name: string, } | { "type": "tool_call_delta", 
/**
 * The call id.
 */
id: string, 
/**
 * The fragment; the fragments of one call concatenate to its input.
 */
json: string, } | { "type": "tool_call_end", 
/**
 * The call id.
 */
id: string, 
/**
 * The tool's name.
 */
name: string, 
/**
 * The parsed input (`{}` when the model sent none, or sent text
 * that is not a JSON object).
 */
input: Record<string, unknown>, 
/**
 * Set when the model's input text is not a JSON object: an
 * `invalid_input` error to give back to the model as the call's
 * result (the call is not run). The stream goes on.
 */
input_error?: WireError, } | { "type": "usage", 
/**
 * Prompt tokens.
 */
input_tokens: number, 
/**
 * Generated tokens.
 */
output_tokens: number, 
/**
 * Of `input_tokens`, those read from the provider's prompt cache
 * (Anthropic's `cache_read_input_tokens`, OpenAI's
 * `prompt_tokens_details.cached_tokens`); 0 when it says none.
 */
cache_read_tokens?: number, 
/**
 * Of `input_tokens`, those written to the prompt cache (Anthropic's
 * `cache_creation_input_tokens`); 0 when it says none.
 */
cache_write_tokens?: number, } | { "type": "prompt_progress", 
/**
 * Prompt tokens read so far (those taken from its cache included).
 */
processed: number, 
/**
 * Prompt tokens in all.
 */
total: number, } | { "type": "retrying", 
/**
 * Which retry this is, from 1.
 */
attempt: number, 
/**
 * How long the bridge waits before it.
 */
delay_ms: number, 
/**
 * Why the previous attempt failed.
 */
error: WireError, } | { "type": "done", 
/**
 * Why the model stopped.
 */
stop_reason: string, } | { "type": "error", 
/**
 * What went wrong, as the standardized error.
 */
error: WireError, };

export type Provider = "anthropic" | "openai" | "ollama";

export type LocalServer = { 
/**
 * Which program it likely is (by its usual port).
 */
name: string, 
/**
 * The base URL to put in the settings (OpenAI-compatible, with `/v1`).
 */
base_url: string, 
/**
 * The model ids from its `/models` list, in its order.
 */
models: Array<string>, };

export type ModelInfo = { 
/**
 * Tokens the model can hold, prompt and reply together.
 */
context_window?: number, 
/**
 * Where `context_window` comes from: `server` (it said so),
 * `known_model` (the table of hosted models) or `settings` (the
 * window the user set for servers that say none).
 */
source?: string, 
/**
 * The most tokens the model can hold whatever window it runs with,
 * when the server says (Ollama's `<arch>.context_length`): a window
 * asked for in the settings is capped by it.
 */
max_context_window?: number, 
/**
 * Whether the server's chat template can call tools, when it says.
 */
supports_tools?: boolean, 
/**
 * Whether the server counts a request's tokens with the model's own
 * template and tokenizer ([`crate::prompt_tokens`]): llama.cpp's
 * `llama-server`, known by its `/props`.
 */
counts_tokens?: boolean, 
/**
 * Whether the model's chat template writes each tool's JSON indented,
 * one key per line (Llama 3's Hugging Face template does): such a
 * template costs about two tokens per line, and the loop's estimate
 * counts them. From llama-server's own template (`/props`), else from a
 * Llama 3 model's name on a server that runs Hugging Face templates
 * (LM Studio, vLLM); unknown for Ollama (its own templates print the
 * tools compact) and hosted providers.
 */
indents_tools?: boolean, 
/**
 * What a million tokens cost, when known: the built-in list price of
 * a hosted model, nothing on this machine (see [`crate::prices`]).
 */
price?: Price, };

export type ListedModel = { 
/**
 * The name to send as `model`.
 */
id: string, 
/**
 * A name for people, when the server gives one (Anthropic).
 */
display_name?: string, };

export type LlmTarget = { provider: Provider, base_url: string, model: string, };

export type Price = { 
/**
 * Prompt tokens not read from or written to the cache.
 */
input: number, 
/**
 * Generated tokens.
 */
output: number, 
/**
 * Prompt tokens read from the provider's cache.
 */
cache_read?: number, 
/**
 * Prompt tokens written to the provider's cache.
 */
cache_write?: number, };

export type ToolchainSetting = { "image": string } | "devcontainer" | { "dockerfile": string };

export type TaskContainer = { 
/**
 * `podman` or `docker`, or `kubernetes` (a pod of the user's
 * cluster, through `kubectl`: see `kube`).
 */
engine: string, 
/**
 * Corral's image (`scripts/image.sh`) or one built on it; unused
 * when `toolchain` is set.
 */
image: string, 
/**
 * The project's toolchain instead: an image to add corral-cli to, the
 * project's devcontainer, or a Dockerfile in the project, built by
 * the engine.
 */
toolchain?: ToolchainSetting, 
/**
 * CPUs each task's container may use (`--cpus`); none: the engine's.
 */
cpus?: number, 
/**
 * Memory each may use, in MiB (`--memory`); none: the engine's.
 */
memory_mib?: number, 
/**
 * More of the engine's words for `run` (a runtime, ulimits...).
 */
options: Array<string>, 
/**
 * Where in the cluster, for the engine `kubernetes`.
 */
kube?: KubeSetting, };

export type KubeSetting = { 
/**
 * The namespace the task's objects are made in.
 */
namespace: string, 
/**
 * The kubeconfig's context; its current one when none.
 */
context?: string, 
/**
 * What makes the pod: a batch Job, or an agent-sandbox `Sandbox`.
 */
kind: KubeKind, };

export type KubeKind = "job" | "sandbox";

export type SavedSettings = { provider: Provider, base_url: string, model: string, max_tokens: number, 
/**
 * The context window to assume for a server that reports none; a
 * window the server reports wins (a settings file from before it: none).
 */
context_window?: number, mode: Mode, 
/**
 * A desktop notification when a reply finishes or an approval waits
 * while the window is not focused (a settings file from before it: on).
 */
notifications: boolean, 
/**
 * How many of a project's tasks may run at once (none: half the
 * machine's cores, at least one); a task started over it waits.
 */
tasks_at_once?: number, 
/**
 * Where a task may run besides here: a container of this engine and
 * image, with these limits (none: tasks run here only).
 */
task_container?: TaskContainer, 
/**
 * Folders to look for language servers in first (nvm's or volta's
 * global packages, say), before cargo's, the system's and
 * `~/.local/bin`.
 */
language_server_folders?: Array<string>, };

export type Settings = { has_api_key: boolean, provider: Provider, base_url: string, model: string, max_tokens: number, 
/**
 * The context window to assume for a server that reports none; a
 * window the server reports wins (a settings file from before it: none).
 */
context_window?: number, mode: Mode, 
/**
 * A desktop notification when a reply finishes or an approval waits
 * while the window is not focused (a settings file from before it: on).
 */
notifications: boolean, 
/**
 * How many of a project's tasks may run at once (none: half the
 * machine's cores, at least one); a task started over it waits.
 */
tasks_at_once?: number, 
/**
 * Where a task may run besides here: a container of this engine and
 * image, with these limits (none: tasks run here only).
 */
task_container?: TaskContainer, 
/**
 * Folders to look for language servers in first (nvm's or volta's
 * global packages, say), before cargo's, the system's and
 * `~/.local/bin`.
 */
language_server_folders?: Array<string>, };

export type SettingsInput = { 
/**
 * A new key for the base URL's origin; `""` clears it; absent keeps it.
 */
api_key?: string, provider: Provider, base_url: string, model: string, max_tokens: number, 
/**
 * The context window to assume for a server that reports none; a
 * window the server reports wins (a settings file from before it: none).
 */
context_window?: number, mode: Mode, 
/**
 * A desktop notification when a reply finishes or an approval waits
 * while the window is not focused (a settings file from before it: on).
 */
notifications: boolean, 
/**
 * How many of a project's tasks may run at once (none: half the
 * machine's cores, at least one); a task started over it waits.
 */
tasks_at_once?: number, 
/**
 * Where a task may run besides here: a container of this engine and
 * image, with these limits (none: tasks run here only).
 */
task_container?: TaskContainer, 
/**
 * Folders to look for language servers in first (nvm's or volta's
 * global packages, say), before cargo's, the system's and
 * `~/.local/bin`.
 */
language_server_folders?: Array<string>, };

export type ProjectInfo = { root: string, name: string, };

export type UpdateSettings = { 
/**
 * Off until the user turns it on: a check is a request to the
 * manifest's server, and Corral sends nothing anywhere unasked.
 */
check: boolean, 
/**
 * The release manifest (`latest.json`); empty for the one this build
 * was made with (none in a build from source).
 */
manifest_url: string, };

export type AppInstall = { "kind": "file", path: string, } | { "kind": "package", marker: string, };

export type UpdateStatus = { settings: UpdateSettings, 
/**
 * The running version.
 */
version: string, install: AppInstall, 
/**
 * Whether this build carries a release key (none: no update can be
 * verified, so none is looked for).
 */
has_key: boolean, 
/**
 * The manifest a check fetches: the setting, else the built-in one.
 */
manifest_url: string | null, };

export type UpdateOffer = { version: string, current_version: string, notes: string | null, };

export type InstalledUpdate = { version: string, path: string, };

export type Launch = { "type": "opening", folder: string, } | { "type": "opened", project: ProjectInfo, } | { "type": "failed", folder: string, error: WireError, };

export type ConnectionOk = { ok: true, model: string, };

export type ConversationSummary = { id: string, project: string, 
/**
 * The first line of the first user message, until renamed.
 */
title: string, 
/**
 * The first line of the first user message.
 */
first_line: string, created_ms: number, 
/**
 * When the last entry was appended.
 */
updated_ms: number, 
/**
 * The model of the last assistant message.
 */
model: string, input_tokens: number, output_tokens: number, 
/**
 * Of `input_tokens`, those read from the provider's prompt cache.
 */
cache_read_tokens: number, 
/**
 * Of `input_tokens`, those written to the provider's prompt cache.
 */
cache_write_tokens: number, 
/**
 * What its requests of known price cost, in US dollars.
 */
cost_usd: number, 
/**
 * How many of its requests (or stored entries) had no known price:
 * above 0, `cost_usd` is only part of the cost.
 */
unpriced: number, 
/**
 * How many entries it has.
 */
entries: number, 
/**
 * Where it was forked from, if it was.
 */
forked_from?: ForkPoint, 
/**
 * The server and model chosen for it in the model switcher (an
 * `LlmTarget`); absent: the settings' model.
 */
target?: LlmTarget, };

export type ForkPoint = { conversation: string, before_seq: number, };

export type StoredEntry = { seq: number, message: Message | null, items: unknown[], 
/**
 * The `tool_use_id`s of tool results left out of `message` (their
 * `content` is `""`) by a brief open; absent when it is whole.
 */
elided?: Array<string>, };

export type ConversationData = { summary: ConversationSummary, entries: Array<StoredEntry>, };

export type NewEntry = { message?: Message, items: unknown[], 
/**
 * Tokens this entry cost (added to the conversation's totals).
 */
usage?: TokenUsage, };

export type TokenUsage = { 
/**
 * Prompt tokens, cached ones included.
 */
input_tokens: number, output_tokens: number, 
/**
 * Of `input_tokens`, those read from the provider's prompt cache.
 */
cache_read_tokens: number, 
/**
 * Of `input_tokens`, those written to the provider's prompt cache.
 */
cache_write_tokens: number, 
/**
 * What the requests of known price cost, in US dollars.
 */
cost_usd: number, 
/**
 * How many requests had no known price.
 */
unpriced: number, };

export type DayUsage = { 
/**
 * The day, `YYYY-MM-DD`, in the time zone of the offset asked with.
 */
day: string, 
/**
 * How many conversations made requests that day.
 */
conversations: number, 
/**
 * Prompt tokens, cached ones included.
 */
input_tokens: number, output_tokens: number, 
/**
 * Of `input_tokens`, those read from the provider's prompt cache.
 */
cache_read_tokens: number, 
/**
 * Of `input_tokens`, those written to the provider's prompt cache.
 */
cache_write_tokens: number, 
/**
 * What the requests of known price cost, in US dollars.
 */
cost_usd: number, 
/**
 * How many requests had no known price.
 */
unpriced: number, };

export type Appended = { conversation: string, seq: number, };

export type SearchHit = { conversation: string, title: string, seq: number, snippet: string, updated_ms: number, };

export type DiffSize = { files: number, added: number, removed: number, };

export type TaskInfo = { 
/**
 * Its name: the branch's part after `corral/`.
 */
name: string, branch: string, 
/**
 * Its worktree.
 */
path: string, 
/**
 * It holds changes not committed on its branch yet.
 */
changed: boolean, 
/**
 * Its whole change against where it started.
 */
size: DiffSize, };

export type TaskPlace = "here" | "container";

export type TaskEntry = { 
/**
 * Its newest conversation's id, if it has one.
 */
conversation: string | null, 
/**
 * Where its session runs when not here: its engine and container.
 */
place: string | null, 
/**
 * Its name: the branch's part after `corral/`.
 */
name: string, branch: string, 
/**
 * Its worktree.
 */
path: string, 
/**
 * It holds changes not committed on its branch yet.
 */
changed: boolean, 
/**
 * Its whole change against where it started.
 */
size: DiffSize, };

export type TaskList = { tasks: Array<TaskEntry>, 
/**
 * The `tasks_at_once` setting, or half the cores (at least one).
 */
at_once: number, };

export type TaskFile = { path: string, 
/**
 * `added`, `modified` or `deleted`.
 */
status: string, 
/**
 * Its text at the base (`null`: absent, or not text).
 */
before: string | null, 
/**
 * Its text in the task (`null`: absent, or not text).
 */
after: string | null, 
/**
 * What runs it by itself once it is in the project (`null`: nothing):
 * landing it needs the user to name it.
 */
auto_run: string | null, };

export type TaskDiff = { branch: string, 
/**
 * The commit it started from (where its branch and the project's meet).
 */
base: string, files: Array<TaskFile>, };

export type Side = "task" | "project";

export type Merged = { branch: string, commit: string, 
/**
 * Its worktree and branch were removed after the merge (they stay
 * where git would not remove them cleanly).
 */
removed: boolean, };

export type Applied = { branch: string, files: Array<string>, };

/** The image types a message may carry. */
export const IMAGE_TYPES: readonly string[] = ["image/png", "image/jpeg", "image/gif", "image/webp"];
/** The largest image a message may carry, in bytes before base64. */
export const IMAGE_MAX_BYTES = 5242880;
/** The most images the person may attach to one message. */
export const IMAGES_PER_MESSAGE = 4;
/** The most images one request may carry, all messages together. */
export const IMAGES_PER_REQUEST = 100;
