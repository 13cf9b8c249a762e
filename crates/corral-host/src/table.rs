//! The commands of the agent's loop, each written once: its name, its
//! arguments and what it resolves to as the window sees them
//! (TypeScript), the section of `docs/ipc.md` that lists it, a doc line,
//! and what answers it ([`Serves`]). The project's are answered by
//! [`crate::ProjectCommands`] wherever the project is: the window (for a
//! project here, and sent to `serve` for a remote one), `serve`, and the
//! loop of `exec` and `acp`. The model's and the history's by
//! [`crate::ModelCommands`] on the host's own machine: the window and
//! `exec`/`acp`. The app adds its window's own commands to this list for
//! `ui/src/lib/commands.ts` and `docs/ipc.md`.

/// One command as the window sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Command {
    /// The section of `docs/ipc.md` whose table lists it.
    pub section: &'static str,
    /// The name the window invokes.
    pub name: &'static str,
    /// Its arguments as TypeScript object members (`""` for none).
    pub args: &'static str,
    /// What it resolves to, as a TypeScript type.
    pub result: &'static str,
    /// What the answer means, for `docs/ipc.md` (its doc comment lines).
    pub doc: &'static [&'static str],
    /// What answers it.
    pub serves: Serves,
}

/// What answers a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Serves {
    /// The project's session ([`crate::ProjectCommands`]), where the
    /// project is: a remote project's there.
    Session,
    /// The model and the history ([`crate::ModelCommands`]), where the
    /// keys and the history are: always the host's own machine.
    Model,
    /// The window itself (the app's own commands: settings, dialogs,
    /// updates...), never in this table.
    Window,
}

/// Declares [`COMMANDS`] from entries written as the app writes its own.
macro_rules! command_table {
    ($(
        $serves:ident $section:literal {
            $(
                $(#[doc = $doc:literal])*
                $name:ident ( $args:literal ) -> $result:literal;
            )*
        }
    )*) => {
        /// Every command of the project, in the order `docs/ipc.md` lists them.
        pub const COMMANDS: &[Command] = &[$($(
            Command {
                section: $section,
                name: stringify!($name),
                args: $args,
                result: $result,
                doc: &[$($doc),*],
                serves: Serves::$serves,
            },
        )*)*];
    };
}

command_table! {
    Session "Tools" {
        /// the tool's output object (`corral-cli tools` / `tool_specs` list the tools and their
        /// input schemas), from the ticket `check_call` kept: it runs once, judged again where its
        /// paths lead now. `approval`: the user's answer if it asked (a grant or rule it holds is
        /// recorded, then the call runs). A write changes only the file its preview showed, else
        /// `stale_file`. An approved call is two round trips: `check_call`, then this
        run_call("ticket: string, approval?: ApprovalAnswer, run_id?: string, on_output?: Channel<ShellEvent>, turn_id?: string, call_id?: string") -> "unknown";
        /// the tool's output object, checked and run in one round trip without a preview: for a call
        /// no one is asked about (the window's own reads); one the policy asks about fails with
        /// `approval_required`. `conversation`: the window's key of the conversation, whose grants
        /// may cover the call
        call_tool("name: string, input: Record<string, unknown>, conversation?: string, run_id?: string, on_output?: Channel<ShellEvent>, turn_id?: string, call_id?: string") -> "unknown";
    }
    Session "Project" {
        /// `{ state: "building", listed, indexed }` | `{ state: "ready", files, ms }` |
        /// `{ state: "failed", message }` of the open project's search index (built in the
        /// background when it opens)
        search_index_status("") -> "IndexStatus";
        /// `{ counter, folders: string[], all }`: the open project's folders (`"."` the root,
        /// `/`-separated) whose entries changed on disk after batch `since` (`0` at first; pass
        /// `counter` back next time); `all` when `since` is too old or not this project's (list
        /// every shown folder again). The file tree asks every 500 ms
        tree_changes("since: number") -> "TreeChanges";
    }
    Session "Commands and skills" {
        /// `{ commands, skills, problems, claude_tools }`: the custom slash commands (`.claude/commands/**/*.md`,
        /// `~/.claude/commands/**/*.md`, `~/.codex/prompts/*.md`) and skills (`.claude/skills/*/SKILL.md`,
        /// `~/.claude/skills/*/SKILL.md`) of the open project and the user, the project's first, each
        /// file's text whole; the project's read beneath its root (a link leading out is not
        /// followed). What could not be read is a line of `problems`; `claude_tools`: Claude
        /// Code's tool names for Corral's tools, as hooks' matchers and agents' tool lists read them
        customization("") -> "Customization";
        /// a file of a listed skill's folder (`SKILL.md` without `file`); `path_outside_root` for a
        /// path that climbs out of the folder, `permission_denied` for a secret-like name
        skill_file("source: SetupSource, folder: string, file?: string") -> "SkillFile";
    }
    Session "Policy and approvals" {
        /// `{ name, description, input_schema, risk: "read" | "write" | "shell" }`; `exec_shell`'s
        /// description names the programs the user added (for every project and the open one); the
        /// loop asks again at each run
        tool_specs("") -> "ToolSpec[]";
        /// below
        check_call("tool: string, input: Record<string, unknown>, conversation?: string") -> "Ticket";
        /// oldest first: what the user allowed in that conversation
        conversation_grants("conversation: string") -> "GrantEntry[]";
        /// those left (an unknown id is not an error)
        revoke_grant("conversation: string, id: string") -> "GrantEntry[]";
        /// the conversation's grants, its answers about domains and its calls checked and not run end (the window left it)
        end_conversation("conversation: string") -> "null";
        /// the user's answer to a `DomainQuestion` (below); `false` when it no longer waits
        /// (answered, timed out, its command stopped)
        answer_domain("id: string, allow: boolean") -> "boolean";
        /// cancels an LLM stream or a shell run
        cancel("run_id: string") -> "null";
    }
    Session "Hooks" {
        /// the events with hooks that run (the user's `~/.claude/settings.json`, the project's
        /// trusted ones) and the project's settings files whose hooks wait for the user's trust,
        /// each with its exact text and its hooks. The loop asks once per run
        hook_status("") -> "HookStatus";
        /// what the hooks of `request.event` said, joined (for a tool event, those matching its
        /// tool); at once and empty when none matches. Each runs in the sandbox's build profile
        /// with its time limit
        run_hooks("request: HookRequest") -> "HookOutcome";
    }
    Session "Shell programs, rules and background commands" {
        /// newest first: the open project's background commands (`output` empty)
        list_processes("") -> "CommandOutput[]";
        /// its output from that byte
        process_output("run_id: string, since_byte?: number") -> "CommandOutput";
        /// once it stopped (or after 3 s)
        stop_process("run_id: string") -> "CommandOutput";
    }
    Session "The user's MCP servers" {
        /// `{ name, state: "starting" | "running" | "failed" | "stopped", tools: string[],
        /// problems?: string[], stderr }` of the open project's servers; `tools`
        /// by their own names on the server (the model calls them `SERVER__TOOL`)
        mcp_status("") -> "McpServerStatus[]";
        /// after that server stopped and started again
        restart_mcp_server("name: string") -> "McpServerStatus[]";
    }
    Session "Checkpoints" {
        /// oldest first
        list_checkpoints("") -> "Checkpoint[]";
        /// what restoring `id` (or only `path`) would change: `from: "current"`, each change's
        /// `before` the project now, `after` the checkpoint
        checkpoint_diff("id: string, path?: string") -> "Comparison";
        /// what changed from checkpoint `from` to `to` (or to the project now: `to: "current"`)
        compare_checkpoints("from: string, to?: string") -> "Comparison";
        /// after the project (or `path`) is as `id` has it; `undo` is the checkpoint taken just
        /// before
        restore_checkpoint("id: string, path?: string") -> "Restored";
        /// what undoing only the call `id` was taken before would do: the paths it changed (from
        /// `id` to the next checkpoint, or to now), which of them changed again since, and the diff
        /// of those paths only
        call_undo_diff("id: string") -> "CallUndo";
        /// after those paths, and only those, are as `id` has them; `undo` is the checkpoint taken
        /// just before
        undo_call("id: string") -> "Restored";
        /// once, what the store set aside on opening the project: a restore journal that could not
        /// be finished (what was left undone, where the journal went, which checkpoints finish or
        /// undo it)
        checkpoint_notice("") -> "string | null";
    }
    Model "LLM" {
        /// when the stream has ended (the terminal event was sent); with `target` (`{ provider,
        /// base_url, model }`, the conversation's model) that server and model instead of the
        /// settings', with the key saved for its origin
        llm_stream("run_id: string, request: LlmRequest, target?: LlmTarget, on_event: Channel<LlmEvent>") -> "null";
        /// what is known of the model of `settings` (else the saved settings): its context window
        /// and where that comes from (the server, the table of hosted models, or the settings),
        /// whether it can call tools, its price per million tokens (the user's `prices.json` first,
        /// then the built-in list prices, 0 on this machine; absent when unknown)
        model_info("settings?: SettingsInput") -> "ModelInfo";
        /// the tokens `request` makes as the server's own chat template and tokenizer count them
        /// (llama.cpp's `POST /apply-template`, then `POST /tokenize`), at `target` when given,
        /// else the settings' server; null when the server cannot count
        count_prompt_tokens("request: LlmRequest, target?: LlmTarget") -> "number | null";
    }
    Model "Conversations" {
        /// its entries oldest first; with `elide_over`, each tool result longer than that many
        /// bytes is left out (`content: ""`, its id in the entry's `elided`); with `before_seq`,
        /// only the entries before that one; with `last`, only the newest `last` of them
        /// (`summary.entries` still counts them all). The window opens a conversation with its last
        /// 60 entries, results over 4 KiB left out, and fetches the whole behind in parts of 500
        /// (`last: 500`, then `before_seq` the first one it has)
        open_conversation("id: string, elide_over?: number, before_seq?: number, last?: number") -> "ConversationData";
        /// without `conversation`, a new one is started
        append_entry("conversation?: string, entry: NewEntry") -> "Appended";
    }
}

/// The command called `name`, if it is one of [`COMMANDS`].
pub fn command(name: &str) -> Option<&'static Command> {
    COMMANDS.iter().find(|c| c.name == name)
}

/// Whether `name` is one of [`COMMANDS`].
pub fn is_command(name: &str) -> bool {
    command(name).is_some()
}

/// The section of the command `name`, if it is one of [`COMMANDS`].
pub fn section_of(name: &str) -> Option<&'static str> {
    command(name).map(|c| c.section)
}
