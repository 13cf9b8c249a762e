// The only importer of @tauri-apps/api (commands.ts takes its Channel type).
// Every command of docs/ipc.md is one typed function here, checked against
// the command map generated from the Rust list (commands.ts); every
// rejection becomes a WireError.
import { Channel, invoke } from "@tauri-apps/api/core";
import { getCurrentWindow } from "@tauri-apps/api/window";
import type { CommandName, Commands } from "./commands";
import { toWireError } from "./errors";
import type { CallTag } from "./types";
import type {
  ApprovalAnswer,
  HookRequest,
  DomainQuestion,
  Launch,
  LlmEvent,
  LlmRequest,
  LlmTarget,
  NewEntry,
  SavedRule,
  SettingsInput,
  SetupSource,
  McpSettings,
  Notice,
  ShellEvent,
  ShellOutput,
  UpdateSettings,
} from "./types";

/**
 * How a call runs: by the `ticket` check_call gave it (the call as Rust
 * checked it, its input parsed once), with `approval`, the user's answer
 * if it asked; without a ticket it is checked and run in one (call_tool),
 * in `conversation`, whose grants may cover it.
 */
export type Consent = { ticket?: string; approval?: ApprovalAnswer; conversation?: string };

/** What a run of a call carries besides the call: its live output, run id and checkpoint tag. */
type RunArgs = { run_id?: string; on_output?: Channel<ShellEvent>; turn_id?: string; call_id?: string };

/** Runs a call: `run_call` of its ticket, or `call_tool` (checked and run in one) without one. */
function runTool(name: string, input: Record<string, unknown>, consent: Consent | undefined, run: RunArgs) {
  if (consent?.ticket !== undefined) {
    const approval = consent.approval === undefined ? {} : { approval: consent.approval };
    return call("run_call", { ticket: consent.ticket, ...approval, ...run });
  }
  const conversation = consent?.conversation === undefined ? {} : { conversation: consent.conversation };
  return call("call_tool", { name, input, ...conversation, ...run });
}

/** Which entries of a conversation `openConversation` asks for, and how. */
export type OpenPart = { elideOver?: number; beforeSeq?: number; last?: number };

/** A command's arguments: may be left out when none is required. */
export type ArgsOf<K extends CommandName> = Record<string, never> extends Commands[K]["args"] ? [args?: Commands[K]["args"]] : [args: Commands[K]["args"]];

async function call<K extends CommandName>(command: K, ...args: ArgsOf<K>): Promise<Commands[K]["result"]> {
  try {
    return await invoke<Commands[K]["result"]>(command, args[0]);
  } catch (error) {
    throw toWireError(error);
  }
}

function channel<T>(onMessage: (message: T) => void): Channel<T> {
  const ch = new Channel<T>();
  ch.onmessage = onMessage;
  return ch;
}

export const ipc = {
  // Project
  /** A folder here or a remote one (`ssh://…`, `user@host:/path`); `installRemote`: the user agreed to copy corral-cli there. */
  openProject: (path: string, installRemote = false) =>
    call("open_project", installRemote ? { path, install_remote: true } : { path }),
  pickProject: () => call("pick_project"),
  closeProject: () => call("close_project"),
  projectInfo: () => call("project_info"),
  recentProjects: () => call("recent_projects"),

  // Policy and approvals
  toolSpecs: () => call("tool_specs"),
  /**
   * Checks a call and has Rust keep it as a ticket (run it with `callTool`
   * and `{ ticket }`). `conversation`: the window's key of the
   * conversation; a grant of it may make the call `allow`.
   */
  checkCall: (tool: string, input: Record<string, unknown>, conversation?: string) =>
    call("check_call", { tool, input, ...(conversation === undefined ? {} : { conversation }) }),
  /** Those of `paths` whose names the policy calls secret-like. */
  secretLike: (paths: string[]) => call("secret_like", { paths }),

  // Hooks
  hookStatus: () => call("hook_status"),
  runHooks: (request: HookRequest) => call("run_hooks", { request }),
  trustHooks: (file: string, text: string) => call("trust_hooks", { file, text }),
  /** What the user allowed in the conversation, oldest first. */
  conversationGrants: (conversation: string) => call("conversation_grants", { conversation }),
  /** Revokes one; resolves to those left. */
  revokeGrant: (conversation: string, id: string) => call("revoke_grant", { conversation, id }),
  /** The window left the conversation: its grants end. */
  endConversation: (conversation: string) => call("end_conversation", { conversation }),
  /** A later `corral FOLDER` (handed to this app), once it opened or failed; resolves to the unsubscribe. */
  onLaunch: async (handler: (launch: Launch) => void): Promise<() => void> => {
    const onLaunch = new Channel<Launch>();
    onLaunch.onmessage = handler;
    await call("watch_launches", { on_launch: onLaunch });
    return () => {
      onLaunch.onmessage = () => undefined;
    };
  },
  /** The user's answer about a domain off the egress allowlist; false if the question no longer waits. */
  answerDomain: (id: string, allow: boolean) => call("answer_domain", { id, allow }),
  /** Questions about domains (and their closing) as the app sends them; resolves to the unsubscribe. */
  onDomainQuestion: async (handler: (question: DomainQuestion) => void): Promise<() => void> => {
    const onQuestion = new Channel<DomainQuestion>();
    onQuestion.onmessage = handler;
    await call("domain_questions", { on_question: onQuestion });
    return () => {
      onQuestion.onmessage = () => undefined;
    };
  },

  // The shell's programs and saved rules (kept in the app's config, never the project)
  shellConfig: () => call("shell_config"),
  savePrograms: (global: string[], project: string[] | null) =>
    call("save_programs", { global, project }),
  removeRule: (rule: SavedRule) => call("remove_rule", { rule }),
  /** The sandbox's limits per command and for all commands at once, as Rust sets them (Settings shows them). */
  sandboxLimits: () => call("sandbox_limits"),
  // The open project's search index, built in the background when it opens
  searchIndexStatus: () => call("search_index_status"),
  /** The project's and the user's custom commands and skills, each file's text whole. */
  customization: () => call("customization"),
  /** A file of a listed skill's folder (its SKILL.md without `file`). */
  skillFile: (source: SetupSource, folder: string, file?: string) =>
    call("skill_file", { source, folder, ...(file === undefined ? {} : { file }) }),
  /** The open project's folders whose entries changed after batch `since` (the file tree polls it). */
  treeChanges: (since: number) => call("tree_changes", { since }),
  /** The system clipboard's image as PNG bytes (empty: none); a paste WebKitGTK gave no image for. */
  clipboardImage: () => call("clipboard_image"),
  /** A desktop notification with the app's own words; false when the setting is off. */
  notifyUser: (notice: Notice) => call("notify_user", { notice }),
  // Updates of the app itself: the switch, a check, an install (a signature that does not match is refused)
  updateStatus: () => call("update_status"),
  saveUpdateSettings: (settings: UpdateSettings) => call("save_update_settings", { settings }),
  checkUpdate: () => call("check_update"),
  installUpdate: (version: string) => call("install_update", { version }),
  // The user's MCP servers (kept in the app's config; values of their variables never come back)
  mcpSettings: () => call("mcp_settings"),
  saveMcpSettings: (settings: McpSettings) => call("save_mcp_settings", { settings }),
  mcpStatus: () => call("mcp_status"),
  restartMcpServer: (name: string) => call("restart_mcp_server", { name }),
  // The open project's background commands (the Processes panel)
  listProcesses: () => call("list_processes"),
  processOutput: (runId: string, sinceByte: number) =>
    call("process_output", { run_id: runId, since_byte: sinceByte }),
  stopProcess: (runId: string) => call("stop_process", { run_id: runId }),

  // Tools: a checked call runs by its ticket (run_call); the window's own
  // reads are checked and run in one (call_tool). The model's input object
  // passes straight through.
  // `tag` names the user turn and the card of a call that can change the
  // project: the checkpoint taken before it carries them.
  // `runId`: `cancel(runId)` stops the call (an MCP server's tool).
  callTool: (name: string, input: Record<string, unknown>, consent?: Consent, tag?: CallTag, runId?: string) =>
    runTool(name, input, consent, { ...tag, ...(runId === undefined ? {} : { run_id: runId }) }),
  execShell: (
    input: Record<string, unknown>,
    consent: Consent | undefined,
    runId: string,
    onOutput: (event: ShellEvent) => void,
    tag?: CallTag,
  ) => runTool("exec_shell", input, consent, { run_id: runId, on_output: channel(onOutput), ...tag }) as Promise<ShellOutput>,

  // Checkpoints: taken before every call that can change the project.
  listCheckpoints: () => call("list_checkpoints"),
  /** What restoring `id` (or only `path`) would change: now (before) against the checkpoint (after). */
  checkpointDiff: (id: string, path?: string) =>
    call("checkpoint_diff", { id, ...(path === undefined ? {} : { path }) }),
  /** What changed from `from` to `to` (or to the project as it is). */
  compareCheckpoints: (from: string, to?: string) =>
    call("compare_checkpoints", { from, ...(to === undefined ? {} : { to }) }),
  restoreCheckpoint: (id: string, path?: string) =>
    call("restore_checkpoint", { id, ...(path === undefined ? {} : { path }) }),
  /** What undoing only the call checkpoint `id` was taken before would do, and which of its paths changed again since. */
  callUndoDiff: (id: string) => call("call_undo_diff", { id }),
  /** Puts back what that one call changed, and nothing else. */
  undoCall: (id: string) => call("undo_call", { id }),

  // LLM
  /** To `target` (the conversation's model, see ModelSwitcher) when given, else as the settings say. */
  /**
   * Resolves once the stream's terminal event (`done` or `error`) has
   * arrived, not when the command answers: a channel message over about
   * 8 KB (a tool call's long arguments) travels apart from the command's
   * answer and can arrive after it, and a turn ended early would drop it.
   * The command answers Ok only after sending its terminal event.
   */
  llmStream: async (runId: string, request: LlmRequest, onEvent: (event: LlmEvent) => void, target?: LlmTarget | null) => {
    let ended = (): void => undefined;
    const terminal = new Promise<void>((resolve) => (ended = resolve));
    const events = channel<LlmEvent>((event) => {
      onEvent(event);
      if (event.type === "done" || event.type === "error") ended();
    });
    const answer = await call("llm_stream", { run_id: runId, request, ...(target ? { target } : {}), on_event: events });
    await terminal;
    return answer;
  },
  cancel: (runId: string) => call("cancel", { run_id: runId }),
  getSettings: () => call("get_settings"),
  saveSettings: (settings: SettingsInput) => call("save_settings", { settings }),
  /** Tests `settings` as given (nothing is saved), or the saved settings. */
  testConnection: (settings?: SettingsInput) => call("test_connection", settings ? { settings } : {}),
  modelInfo: (settings?: SettingsInput) => call("model_info", settings ? { settings } : {}),
  /** The server's own count of `request`'s tokens (llama.cpp), at `target` when given; null when it cannot count. */
  countPromptTokens: (request: LlmRequest, target?: LlmTarget | null) => call("count_prompt_tokens", { request, ...(target ? { target } : {}) }),
  /** The models the server of `settings` (or the saved settings) lists; `not_found` when it has no list. */
  listModels: (settings?: SettingsInput) => call("list_models", settings ? { settings } : {}),
  detectLocalServers: () => call("detect_local_servers"),

  // Conversations (kept by Rust; see docs/ipc.md)
  listConversations: () => call("list_conversations"),
  /**
   * The conversation's entries, oldest first; `part` may ask for fewer
   * (`summary.entries` counts them all): with `elideOver`, tool results
   * longer than that many bytes are left out (see `elided`); with
   * `beforeSeq`, only the entries before that one; with `last`, only the
   * newest that many of them.
   */
  openConversation: (id: string, part: OpenPart = {}) =>
    call("open_conversation", {
      id,
      ...(part.elideOver === undefined ? {} : { elide_over: part.elideOver }),
      ...(part.beforeSeq === undefined ? {} : { before_seq: part.beforeSeq }),
      ...(part.last === undefined ? {} : { last: part.last }),
    }),
  appendEntry: (conversation: string | null, entry: NewEntry) =>
    call("append_entry", { ...(conversation === null ? {} : { conversation }), entry }),
  renameConversation: (id: string, title: string) => call("rename_conversation", { id, title }),
  /** Keeps the model chosen in the model switcher with the conversation (null: the settings' model). */
  setConversationModel: (id: string, target: LlmTarget | null) => call("set_conversation_model", { id, target }),
  deleteConversation: (id: string) => call("delete_conversation", { id }),
  restoreConversation: (id: string) => call("restore_conversation", { id }),
  forkConversation: (id: string, beforeSeq: number) =>
    call("fork_conversation", { id, before_seq: beforeSeq }),
  searchConversations: (query: string) => call("search_conversations", { query }),
  conversationMarkdown: (id: string) => call("conversation_markdown", { id }),
  exportConversation: (id: string) => call("export_conversation", { id }),
  historyNotice: () => call("history_notice"),
  checkpointNotice: () => call("checkpoint_notice"),

  // Window
  async setWindowTitle(title: string): Promise<void> {
    document.title = title;
    try {
      await getCurrentWindow().setTitle(title);
    } catch {
      // Outside Tauri, or without the set-title permission: document.title stays.
    }
  },
};

export type Ipc = typeof ipc;
