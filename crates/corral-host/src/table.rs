//! The project's commands, each written once: its name, its arguments and
//! what it resolves to as the window sees them (TypeScript), the section
//! of `docs/ipc.md` that lists it, and a doc line. Every host serves every
//! one of them through [`crate::ProjectCommands::invoke`]: the window (for
//! a project here, and sent to `serve` for a remote one), `serve`, and the
//! loop of `exec` and `acp`. The app adds its window's own commands to
//! this list for `ui/src/lib/commands.ts` and `docs/ipc.md`.

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
}

/// Declares [`COMMANDS`] from entries written as the app writes its own.
macro_rules! command_table {
    ($(
        $section:literal {
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
            },
        )*)*];
    };
}

command_table! {
    "Tools" {
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
    "Project" {
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
    "Commands and skills" {
        /// `{ commands, skills, problems }`: the custom slash commands (`.claude/commands/**/*.md`,
        /// `~/.claude/commands/**/*.md`, `~/.codex/prompts/*.md`) and skills (`.claude/skills/*/SKILL.md`,
        /// `~/.claude/skills/*/SKILL.md`) of the open project and the user, the project's first, each
        /// file's text whole; the project's read beneath its root (a link leading out is not
        /// followed). What could not be read is a line of `problems`
        customization("") -> "Customization";
        /// a file of a listed skill's folder (`SKILL.md` without `file`); `path_outside_root` for a
        /// path that climbs out of the folder, `permission_denied` for a secret-like name
        skill_file("source: SetupSource, folder: string, file?: string") -> "SkillFile";
    }
    "Policy and approvals" {
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
    "Hooks" {
        /// the events with hooks that run (the user's `~/.claude/settings.json`, the project's
        /// trusted ones) and the project's settings files whose hooks wait for the user's trust,
        /// each with its exact text and its hooks. The loop asks once per run
        hook_status("") -> "HookStatus";
        /// what the hooks of `request.event` said, joined (for a tool event, those matching its
        /// tool); at once and empty when none matches. Each runs in the sandbox's build profile
        /// with its time limit
        run_hooks("request: HookRequest") -> "HookOutcome";
    }
    "Shell programs, rules and background commands" {
        /// newest first: the open project's background commands (`output` empty)
        list_processes("") -> "CommandOutput[]";
        /// its output from that byte
        process_output("run_id: string, since_byte?: number") -> "CommandOutput";
        /// once it stopped (or after 3 s)
        stop_process("run_id: string") -> "CommandOutput";
    }
    "The user's MCP servers" {
        /// `{ name, state: "starting" | "running" | "failed" | "stopped", tools: string[],
        /// problems?: string[], stderr }` of the open project's servers; `tools`
        /// by their own names on the server (the model calls them `SERVER__TOOL`)
        mcp_status("") -> "McpServerStatus[]";
        /// after that server stopped and started again
        restart_mcp_server("name: string") -> "McpServerStatus[]";
    }
    "Checkpoints" {
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
}

/// Whether `name` is one of [`COMMANDS`].
pub fn is_command(name: &str) -> bool {
    section_of(name).is_some()
}

/// The section of the command `name`, if it is one of [`COMMANDS`].
pub fn section_of(name: &str) -> Option<&'static str> {
    COMMANDS.iter().find(|c| c.name == name).map(|c| c.section)
}
