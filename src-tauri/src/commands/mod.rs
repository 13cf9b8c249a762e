//! The window's own commands, as Tauri command adapters: parse, call the
//! state or the library, return the result or the standardized error. No
//! tool logic lives here, and none of the project's commands: those are
//! `corral-host`'s table, answered for every host by its code
//! ([`crate::remote::route`] sends the window's there).
//!
//! Every window command is written once more, in the list at the end of
//! this file: its module, its name, its arguments and what it resolves to
//! as the UI sees them (TypeScript), and a doc line. From that list and
//! the host's ([`every_command`]) come the registration ([`handler`]),
//! the typed command map of the UI (`ui/src/lib/commands.ts`) and the
//! command tables of `docs/ipc.md`; the test `command_list` (in
//! `tests/all/`) regenerates both files and fails when they differ.

pub mod channels;
pub mod conversation;
pub mod hooks;
pub mod launch;
pub mod llm;
pub mod mcp;
pub mod policy;
pub mod project;
pub mod sandbox;
pub mod shell;
pub mod tasks;
pub mod updates;

pub use corral_host::Command;

/// Every command the window invokes: the project's (`corral-host`'s
/// table), then the window's own ([`COMMANDS`]).
pub fn every_command() -> impl Iterator<Item = &'static Command> {
    corral_host::COMMANDS.iter().chain(COMMANDS)
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
        /// The window's own commands, in the order `docs/ipc.md` lists them.
        pub const COMMANDS: &[Command] = &[$($(
            Command {
                section: $section,
                name: stringify!($name),
                args: $args,
                result: $result,
                doc: &[$($doc),*],
                serves: corral_host::Serves::Window,
            },
        )*)*];

        /// Tauri's invoke handler for every command of [`COMMANDS`].
        pub fn handler<R: tauri::Runtime>() -> impl Fn(tauri::ipc::Invoke<R>) -> bool + Send + Sync + 'static {
            tauri::generate_handler![$($($module::$name,)*)*]
        }
    };
}

command_list! {
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
    "Policy and approvals" {
        /// from now on questions about domains (below) go to this channel (a reloaded window's
        /// replaces the one before)
        policy::domain_questions("on_question: Channel<DomainQuestion>") -> "null";
        /// those of `paths` whose names are secret-like by the policy's rule (`.env*`, `*.pem`,
        /// `id_rsa`, a word ending in secret or token...), in their order: a read of one asks
        policy::secret_like("paths: string[]") -> "string[]";
    }
    "Hooks" {
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
    }
    "LLM" {
        llm::get_settings("") -> "Settings";
        /// once saved; an open remote project whose session there runs in another mode is
        /// opened again in the one saved (its grants and tickets there end)
        llm::save_settings("settings: SettingsInput") -> "Settings";
        /// `{ ok: true, model }` for `settings` as given (nothing is saved) or the saved settings,
        /// or rejects with an `llm_*` error
        llm::test_connection("settings?: SettingsInput") -> "ConnectionOk";
        /// `{ id, display_name? }`: the models the server of `settings` (else the saved settings)
        /// lists at `GET …/models`, asked with the key saved for its origin; `not_found` when it has
        /// no list (type the name instead), else an `llm_*` error
        llm::list_models("settings?: SettingsInput") -> "ListedModel[]";
        /// `{ name, base_url, models: string[] }` of each server answering on its usual local port
        llm::detect_local_servers("") -> "LocalServer[]";
    }
    "Conversations" {
        /// newest first (imports the project's old JSON conversation first, once)
        conversation::list_conversations("") -> "ConversationSummary[]";
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
        /// every project's model requests summed by day (tokens in, out and cached, the cost of
        /// those with a known price, how many had none), newest first, the newest `days` that
        /// had any (at most 366); a day in the window's time zone, `utc_offset_minutes` east of UTC
        conversation::usage_by_day("days: number, utc_offset_minutes: number") -> "DayUsage[]";
        /// the Markdown export
        conversation::conversation_markdown("id: string") -> "string";
        /// the path written, after the native save dialog; `null` if dismissed
        conversation::export_conversation("id: string") -> "string | null";
        /// once, what became of a history that could not be used (moved aside)
        conversation::history_notice("") -> "string | null";
    }
    "Tasks" {
        /// a git worktree of the open project on a new branch `corral/<slug of name>` (a number
        /// added when taken), in the data folder of the machine the project is on; `invalid_input`
        /// for a project that is not a git repository with a commit. A task's loop names it as
        /// `task` in every command of the loop's table: they run in its session, rooted at its
        /// worktree, and its conversations are kept apart
        /// With `place: "container"` (a project here) its session runs in a container of the
        /// engine and image of `settings.task_container`, the worktree its only writable mount;
        /// with the engine `kubernetes`, in a pod of the user's cluster, its branch sent in and
        /// brought back every minute, and before its diff, merge, apply or push
        tasks::task_new("name: string, place?: TaskPlace") -> "TaskInfo";
        /// every task of the open project (those left by an earlier run or a crash too), its
        /// change's size and its newest conversation; `at_once`: how many may run at once
        tasks::task_list("") -> "TaskList";
        /// its whole change against the commit it started from, committed or not
        tasks::task_diff("task: string") -> "TaskDiff";
        /// its changes committed on its branch, then merged into the project's current branch as
        /// a merge commit. A conflict merges nothing (`io`, `details.files`); `prefer` (`task` or
        /// `project`) says whose lines win where both changed the same ones. A file it adds or
        /// changes that another program runs by itself (`.vscode/tasks.json`, `.envrc`, …) lands
        /// only when `auto_run` names it: otherwise `approval_required`, `details.auto_run`
        /// listing each `{path, runs_it}`, and nothing merged
        tasks::task_merge("task: string, prefer?: Side, auto_run?: string[]") -> "Merged";
        /// its changes put in the project uncommitted (staged); refused while the project holds
        /// uncommitted changes of its own, and a conflict leaves the project as it was; files
        /// that run by themselves as for `task_merge`
        tasks::task_apply("task: string, auto_run?: string[]") -> "Applied";
        /// its container killed by its engine (the next message starts a new one on the same
        /// worktree), or its pod ended, its branch brought back, and a new one started on the
        /// branch, or its commands here ended; for a remote project, nothing more than the
        /// conversation's own Stop
        tasks::task_stop("task: string") -> "null";
        /// its branch pushed to `remote` (`origin`) by the user's git; git's own words
        tasks::task_push("task: string, remote?: string") -> "string";
        /// its commands stopped, its worktree and branch removed; one not merged or holding
        /// changes only with `force`
        tasks::task_discard("task: string, force: boolean") -> "null";
    }
    "The window" {
        /// the window's channel messages queued since it last came, in order, each `[channel,
        /// index, message]`: the app sends a channel's messages this way, the window told to come
        /// by one script that never changes (WebKit keeps something of every distinct script it
        /// ran)
        channels::drain_channels("") -> "[number, number, unknown][]";
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
