//! Tauri command adapters: parse, call the state or the library, return the
//! result or the standardized error. No tool logic lives here.
//!
//! Every command is written once more, in the list at the end of this file:
//! its module, its name, its arguments and what it resolves to as the UI
//! sees them (TypeScript), and a doc line. From that list come the
//! registration ([`handler`]), the typed command map of the UI
//! (`ui/src/lib/commands.ts`) and the command tables of `docs/ipc.md`; the
//! test `command_list` (in `tests/all/`) regenerates both files and fails when they differ.

pub mod checkpoints;
pub mod conversation;
pub mod customization;
pub mod hooks;
pub mod launch;
pub mod llm;
pub mod mcp;
pub mod policy;
pub mod project;
pub mod sandbox;
pub mod shell;
pub mod tools;
pub mod updates;

/// One command of the app as the UI sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Command {
    /// The section of `docs/ipc.md` whose table lists it.
    pub section: &'static str,
    /// The name the UI invokes.
    pub name: &'static str,
    /// Its arguments as TypeScript object members (`""` for none).
    pub args: &'static str,
    /// What it resolves to, as a TypeScript type.
    pub result: &'static str,
    /// What the answer means, for `docs/ipc.md` (its doc comment lines).
    pub doc: &'static [&'static str],
}

/// Declares the one list: [`COMMANDS`] for the contract and [`handler`] for
/// Tauri, from the same entries, so neither can hold a command the other
/// lacks.
macro_rules! command_list {
    ($(
        $section:literal {
            $(
                $(#[doc = $doc:literal])*
                $module:ident :: $name:ident ( $args:literal ) -> $result:literal;
            )*
        }
    )*) => {
        /// Every command of the app, in the order `docs/ipc.md` lists them.
        pub const COMMANDS: &[Command] = &[$($(
            Command {
                section: $section,
                name: stringify!($name),
                args: $args,
                result: $result,
                doc: &[$($doc),*],
            },
        )*)*];

        /// Tauri's invoke handler for every command of [`COMMANDS`].
        pub fn handler<R: tauri::Runtime>() -> impl Fn(tauri::ipc::Invoke<R>) -> bool + Send + Sync + 'static {
            tauri::generate_handler![$($($module::$name,)*)*]
        }
    };
}

command_list! {
    "Tools" {
        /// the tool's output object (`corral-cli tools` / `tool_specs` list the tools and their
        /// input schemas), from the ticket `check_call` kept: it runs once, judged again where its
        /// paths lead now. `approval`: the user's answer if it asked (a grant or rule it holds is
        /// recorded, then the call runs). A write changes only the file its preview showed, else
        /// `stale_file`. An approved call is two round trips: `check_call`, then this
        tools::run_call("ticket: string, approval?: ApprovalAnswer, run_id?: string, on_output?: Channel<ShellEvent>, turn_id?: string, call_id?: string") -> "unknown";
        /// the tool's output object, checked and run in one round trip without a preview: for a call
        /// no one is asked about (the window's own reads); one the policy asks about fails with
        /// `approval_required`. `conversation`: the window's key of the conversation, whose grants
        /// may cover the call
        tools::call_tool("name: string, input: Record<string, unknown>, conversation?: string, run_id?: string, on_output?: Channel<ShellEvent>, turn_id?: string, call_id?: string") -> "unknown";
    }
    "Project" {
        /// a folder here, or a remote folder (`ssh://user@host[:port]/abs/path`, `user@host:/path`,
        /// `alias:/path`; docs/remote.md). When the remote lacks corral-cli of this version it fails
        /// `approval_required` (`details.folder`: where it would be copied); with
        /// `install_remote: true` (the user agreed) it is copied there first
        project::open_project("path: string, install_remote?: boolean") -> "ProjectInfo";
        /// from now on a later `corral FOLDER` (a second start, handed to this app), or a remote
        /// folder named at start, reaches this channel: `opening` as it starts, then `opened` or
        /// `failed` (a reloaded window's replaces the one before; the last launch told before the
        /// window listened is told when it does)
        launch::watch_launches("on_launch: Channel<Launch>") -> "null";
        /// the native folder dialog; null if dismissed
        project::pick_project("") -> "ProjectInfo | null";
        project::close_project("") -> "null";
        /// also set at start from `corral PATH`
        project::project_info("") -> "ProjectInfo | null";
        /// newest first, at most 10
        project::recent_projects("") -> "ProjectInfo[]";
        /// `{ state: "building", listed, indexed }` | `{ state: "ready", files, ms }` |
        /// `{ state: "failed", message }` of the open project's search index (built in the
        /// background when it opens)
        project::search_index_status("") -> "IndexStatus";
        /// `{ counter, folders: string[], all }`: the open project's folders (`"."` the root,
        /// `/`-separated) whose entries changed on disk after batch `since` (`0` at first; pass
        /// `counter` back next time); `all` when `since` is too old or not this project's (list
        /// every shown folder again). The file tree asks every 500 ms
        project::tree_changes("since: number") -> "TreeChanges";
        /// the system clipboard's image as PNG bytes, empty when it holds none (arboard). The
        /// message box asks when a paste brought neither text nor files: WebKitGTK does not hand
        /// the page the `image/png` target screenshot tools offer. Fails `io` when the clipboard
        /// cannot be read
        project::clipboard_image("") -> "ArrayBuffer";
        /// a desktop notification with the app's own words ("Corral: the agent finished",
        /// "Corral: an approval waits"); `false` (nothing shown) when the `notifications` setting
        /// is off. The window calls it only when it is not focused
        project::notify_user("notice: Notice") -> "boolean";
    }
    "Commands and skills" {
        /// `{ commands, skills, problems }`: the custom slash commands (`.claude/commands/**/*.md`,
        /// `~/.claude/commands/**/*.md`, `~/.codex/prompts/*.md`) and skills (`.claude/skills/*/SKILL.md`,
        /// `~/.claude/skills/*/SKILL.md`) of the open project and the user, the project's first, each
        /// file's text whole; the project's read beneath its root (a link leading out is not
        /// followed). What could not be read is a line of `problems`
        customization::customization("") -> "Customization";
        /// a file of a listed skill's folder (`SKILL.md` without `file`); `path_outside_root` for a
        /// path that climbs out of the folder, `permission_denied` for a secret-like name
        customization::skill_file("source: SetupSource, folder: string, file?: string") -> "SkillFile";
    }
    "Policy and approvals" {
        /// `{ name, description, input_schema, risk: "read" | "write" | "shell" }`; `exec_shell`'s
        /// description names the programs the user added (for every project and the open one); the
        /// loop asks again at each run
        policy::tool_specs("") -> "ToolSpec[]";
        /// below
        policy::check_call("tool: string, input: Record<string, unknown>, conversation?: string") -> "Ticket";
        /// oldest first: what the user allowed in that conversation
        policy::conversation_grants("conversation: string") -> "GrantEntry[]";
        /// those left (an unknown id is not an error)
        policy::revoke_grant("conversation: string, id: string") -> "GrantEntry[]";
        /// the conversation's grants, its answers about domains and its calls checked and not run end (the window left it)
        policy::end_conversation("conversation: string") -> "null";
        /// from now on questions about domains (below) go to this channel (a reloaded window's
        /// replaces the one before)
        policy::domain_questions("on_question: Channel<DomainQuestion>") -> "null";
        /// the user's answer to a `DomainQuestion` (below); `false` when it no longer waits
        /// (answered, timed out, its command stopped)
        policy::answer_domain("id: string, allow: boolean") -> "boolean";
        /// cancels an LLM stream or a shell run
        policy::cancel("run_id: string") -> "null";
        /// those of `paths` whose names are secret-like by the policy's rule (`.env*`, `*.pem`,
        /// `id_rsa`, a word ending in secret or token...), in their order: a read of one asks
        policy::secret_like("paths: string[]") -> "string[]";
    }
    "Hooks" {
        /// the events with hooks that run (the user's `~/.claude/settings.json`, the project's
        /// trusted ones) and the project's settings files whose hooks wait for the user's trust,
        /// each with its exact text and its hooks. The loop asks once per run
        hooks::hook_status("") -> "HookStatus";
        /// what the hooks of `request.event` said, joined (for a tool event, those matching its
        /// tool); at once and empty when none matches. Each runs in the sandbox's build profile
        /// with its time limit
        hooks::run_hooks("request: HookRequest") -> "HookOutcome";
        /// after the user trusted the hooks of `file` (`.claude/settings.json` or
        /// `.claude/settings.local.json`) with exactly `text`, kept in the app's config folder;
        /// `stale_file` when the file says something else now
        hooks::trust_hooks("file: string, text: string") -> "HookStatus";
    }
    "Shell programs, rules and background commands" {
        shell::shell_config("") -> "ShellConfig";
        /// a name that is not a bare program name: `invalid_input`
        shell::save_programs("global: string[], project: string[] | null") -> "ShellConfig";
        /// `no_project_open` without a project
        shell::remove_rule("rule: SavedRule") -> "ShellConfig";
        /// newest first: the open project's background commands (`output` empty)
        shell::list_processes("") -> "CommandOutput[]";
        /// its output from that byte
        shell::process_output("run_id: string, since_byte?: number") -> "CommandOutput";
        /// once it stopped (or after 3 s)
        shell::stop_process("run_id: string") -> "CommandOutput";
        /// what one command may use (processes, memory, file size, open files, its TMPDIR and
        /// `/tmp` each) and what all commands of the app share at once (processes, memory; `null`
        /// memory where the machine's could not be read), as the sandbox sets them (Settings)
        sandbox::sandbox_limits("") -> "SandboxLimits";
    }
    "The user's MCP servers" {
        /// `{ servers: McpServerConfig[], secrets_set: string[] }` (`"server/VAR"` of each variable
        /// with a value; values are never returned)
        mcp::mcp_settings("") -> "McpSettingsView";
        /// once the open project's servers were replaced and started (in `settings.secrets`, a
        /// variable left out keeps its value, `""` removes it); `invalid_input` for a bad name, a
        /// duplicate, neither or both of a command and a URL, a URL that is not http(s), a bad
        /// variable name or a 0 s timeout
        mcp::save_mcp_settings("settings: McpSettings") -> "McpServerStatus[]";
        /// `{ name, state: "starting" | "running" | "failed" | "stopped", tools: string[],
        /// problems?: string[], stderr }` of the open project's servers; `tools`
        /// by their own names on the server (the model calls them `SERVER__TOOL`)
        mcp::mcp_status("") -> "McpServerStatus[]";
        /// after that server stopped and started again
        mcp::restart_mcp_server("name: string") -> "McpServerStatus[]";
    }
    "LLM" {
        /// when the stream has ended (the terminal event was sent); with `target` (`{ provider,
        /// base_url, model }`, the conversation's model) that server and model instead of the
        /// settings', with the key saved for its origin
        llm::llm_stream("run_id: string, request: LlmRequest, target?: LlmTarget, on_event: Channel<LlmEvent>") -> "null";
        llm::get_settings("") -> "Settings";
        /// once saved; an open remote project whose session there runs in another mode is
        /// opened again in the one saved (its grants and tickets there end)
        llm::save_settings("settings: SettingsInput") -> "Settings";
        /// `{ ok: true, model }` for `settings` as given (nothing is saved) or the saved settings,
        /// or rejects with an `llm_*` error
        llm::test_connection("settings?: SettingsInput") -> "ConnectionOk";
        /// what is known of the model of `settings` (else the saved settings): its context window
        /// and where that comes from (the server, the table of hosted models, or the settings),
        /// whether it can call tools, its price per million tokens (`{}` when nothing is known)
        llm::model_info("settings?: SettingsInput") -> "ModelInfo";
        /// the tokens `request` makes as the server's own chat template and tokenizer count them
        /// (llama.cpp's `POST /apply-template`, then `POST /tokenize`), at `target` when given,
        /// else the settings' server; null when the server cannot count
        llm::count_prompt_tokens("request: LlmRequest, target?: LlmTarget") -> "number | null";
        /// `{ id, display_name? }`: the models the server of `settings` (else the saved settings)
        /// lists at `GET …/models`, asked with the key saved for its origin; `not_found` when it has
        /// no list (type the name instead), else an `llm_*` error
        llm::list_models("settings?: SettingsInput") -> "ListedModel[]";
        /// `{ name, base_url, models: string[] }` of each server answering on its usual local port
        llm::detect_local_servers("") -> "LocalServer[]";
    }
    "Checkpoints" {
        /// oldest first
        checkpoints::list_checkpoints("") -> "Checkpoint[]";
        /// what restoring `id` (or only `path`) would change: `from: "current"`, each change's
        /// `before` the project now, `after` the checkpoint
        checkpoints::checkpoint_diff("id: string, path?: string") -> "Comparison";
        /// what changed from checkpoint `from` to `to` (or to the project now: `to: "current"`)
        checkpoints::compare_checkpoints("from: string, to?: string") -> "Comparison";
        /// after the project (or `path`) is as `id` has it; `undo` is the checkpoint taken just
        /// before
        checkpoints::restore_checkpoint("id: string, path?: string") -> "Restored";
        /// what undoing only the call `id` was taken before would do: the paths it changed (from
        /// `id` to the next checkpoint, or to now), which of them changed again since, and the diff
        /// of those paths only
        checkpoints::call_undo_diff("id: string") -> "CallUndo";
        /// after those paths, and only those, are as `id` has them; `undo` is the checkpoint taken
        /// just before
        checkpoints::undo_call("id: string") -> "Restored";
        /// once, what the store set aside on opening the project: a restore journal that could not
        /// be finished (what was left undone, where the journal went, which checkpoints finish or
        /// undo it)
        checkpoints::checkpoint_notice("") -> "string | null";
    }
    "Conversations" {
        /// newest first (imports the project's old JSON conversation first, once)
        conversation::list_conversations("") -> "ConversationSummary[]";
        /// its entries oldest first; with `elide_over`, each tool result longer than that many
        /// bytes is left out (`content: ""`, its id in the entry's `elided`); with `before_seq`,
        /// only the entries before that one; with `last`, only the newest `last` of them
        /// (`summary.entries` still counts them all). The window opens a conversation with its last
        /// 60 entries, results over 4 KiB left out, and fetches the whole behind in parts of 500
        /// (`last: 500`, then `before_seq` the first one it has)
        conversation::open_conversation("id: string, elide_over?: number, before_seq?: number, last?: number") -> "ConversationData";
        /// without `conversation`, a new one is started
        conversation::append_entry("conversation?: string, entry: NewEntry") -> "Appended";
        conversation::rename_conversation("id: string, title: string") -> "ConversationSummary";
        /// keeps the model chosen in the model switcher with the conversation (`null`: the
        /// settings' model again); opened again it talks to it, and a fork inherits it
        conversation::set_conversation_model("id: string, target: LlmTarget | null") -> "ConversationSummary";
        /// restorable for a minute
        conversation::delete_conversation("id: string") -> "null";
        /// the undo of a delete
        conversation::restore_conversation("id: string") -> "ConversationSummary";
        /// of a new conversation holding the entries before `before_seq`
        conversation::fork_conversation("id: string, before_seq: number") -> "ConversationSummary";
        /// best first, at most 50
        conversation::search_conversations("query: string") -> "SearchHit[]";
        /// the Markdown export
        conversation::conversation_markdown("id: string") -> "string";
        /// the path written, after the native save dialog; `null` if dismissed
        conversation::export_conversation("id: string") -> "string | null";
        /// once, what became of a history that could not be used (moved aside)
        conversation::history_notice("") -> "string | null";
    }
    "Updates" {
        /// the switch (`settings.check`, off until turned on) and the manifest's URL, the running
        /// version, how the app was installed (`{ kind: "file", path }` it replaces itself;
        /// `{ kind: "package", marker }` its package manager updates it, and nothing is fetched),
        /// whether this build carries a release key
        updates::update_status("") -> "UpdateStatus";
        updates::save_update_settings("settings: UpdateSettings") -> "UpdateStatus";
        /// the newer version the manifest offers, `null` when there is none. Fails `update` with
        /// `details.reason`: `off`, `package_manager`, `no_key`, `manifest`, `network` (retryable)
        updates::check_update("") -> "UpdateOffer | null";
        /// after the build of `version` was downloaded, its minisign signature matched the
        /// release key and it replaced the app's file (it runs from the next start). A build
        /// whose signature does not match fails `update` with `details.reason: "signature"`, and
        /// the app's file is left as it was; `changed` when the manifest no longer offers
        /// `version`
        updates::install_update("version: string") -> "InstalledUpdate";
    }
}
