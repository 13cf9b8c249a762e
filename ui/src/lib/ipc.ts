// The only importer of @tauri-apps/api (commands.ts takes its Channel type).
// Every command of docs/ipc.md is one typed function here, checked against
// the command map generated from the Rust list (commands.ts); the agent
// loop's are written once in agent/agentIpc.ts (corral-cli's exec sends
// them too) and run here over Tauri's transport. Every rejection becomes a
// WireError.
import { Channel, invoke } from "@tauri-apps/api/core";
import { getCurrentWindow } from "@tauri-apps/api/window";
import { agentIpc, type ChannelKey, type Transport } from "./agent/agentIpc";
import type { CommandName, Commands } from "./commands";
import { toWireError, wireError } from "./errors";
import type { DomainQuestion, Launch, LlmTarget, McpSettings, Notice, SavedRule, SettingsInput, Side, TaskPlace, UpdateSettings } from "./types";

export type { Consent, OpenPart } from "./agent/agentIpc";

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

/** Each streaming command's channel argument, as commands.ts names it. */
const CHANNEL_ARG: { [K in CommandName as [ChannelKey<K>] extends [never] ? never : K]: ChannelKey<K> } = {
  run_call: "on_output",
  call_tool: "on_output",
  llm_stream: "on_event",
  watch_launches: "on_launch",
  domain_questions: "on_question",
};

/** Tauri's transport: `invoke`, and a Channel under the command's channel argument for its events. */
const tauri: Transport = {
  async call(command, args, onEvent) {
    if (onEvent === undefined) return call(command, ...([args] as ArgsOf<typeof command>));
    const key = (CHANNEL_ARG as Partial<Record<CommandName, string>>)[command];
    if (key === undefined) throw wireError("invalid_input", `\`${command}\` streams no events.`, "This is a bug in Corral.");
    return call(command, ...([{ ...args, [key]: channel(onEvent) }] as ArgsOf<typeof command>));
  },
};

/**
 * The project's commands of the table besides the loop's own, over
 * `transport`: a task's go to its session as the project's go to the
 * project's.
 */
function projectIpc(transport: Transport) {
  const call = transport.call.bind(transport);
  return {
    /** The user's answer about a domain off the egress allowlist; false if the question no longer waits. */
    answerDomain: (id: string, allow: boolean) => call("answer_domain", { id, allow }),
    // The open project's search index, built in the background when it opens
    searchIndexStatus: () => call("search_index_status", {}),
    /** The open project's folders whose entries changed after batch `since` (the file tree polls it). */
    treeChanges: (since: number) => call("tree_changes", { since }),
    mcpStatus: () => call("mcp_status", {}),
    restartMcpServer: (name: string) => call("restart_mcp_server", { name }),
    // The open project's background commands (the Processes panel)
    listProcesses: () => call("list_processes", {}),
    processOutput: (runId: string, sinceByte: number) => call("process_output", { run_id: runId, since_byte: sinceByte }),
    stopProcess: (runId: string) => call("stop_process", { run_id: runId }),
    // Checkpoints: taken before every call that can change the project.
    listCheckpoints: () => call("list_checkpoints", {}),
    /** What restoring `id` (or only `path`) would change: now (before) against the checkpoint (after). */
    checkpointDiff: (id: string, path?: string) => call("checkpoint_diff", { id, ...(path === undefined ? {} : { path }) }),
    /** What changed from `from` to `to` (or to the project as it is). */
    compareCheckpoints: (from: string, to?: string) => call("compare_checkpoints", { from, ...(to === undefined ? {} : { to }) }),
    restoreCheckpoint: (id: string, path?: string) => call("restore_checkpoint", { id, ...(path === undefined ? {} : { path }) }),
    /** What undoing only the call checkpoint `id` was taken before would do, and which of its paths changed again since. */
    callUndoDiff: (id: string) => call("call_undo_diff", { id }),
    /** Puts back what that one call changed, and nothing else. */
    undoCall: (id: string) => call("undo_call", { id }),
    checkpointNotice: () => call("checkpoint_notice", {}),
  };
}

export const ipc = {
  // The agent loop's commands (agent/agentIpc.ts): policy and grants, tools,
  // hooks, custom commands and skills, the model, the conversation's history.
  ...agentIpc(tauri),
  // The project's other commands of the table.
  ...projectIpc(tauri),

  // Tasks: each a git worktree of the project with conversations of its own (taskIpc reaches its session)
  /** `place`: where its session runs (a container: Settings' engine and image). */
  taskNew: (name: string, place: TaskPlace = "here") => call("task_new", place === "here" ? { name } : { name, place }),
  taskList: () => call("task_list"),
  taskDiff: (task: string) => call("task_diff", { task }),
  /** `prefer`: whose lines win where the task and the project changed the same ones. */
  taskMerge: (task: string, prefer?: Side, autoRun: string[] = []) =>
    call("task_merge", prefer === undefined ? { task, auto_run: autoRun } : { task, prefer, auto_run: autoRun }),
  taskApply: (task: string, autoRun: string[] = []) => call("task_apply", { task, auto_run: autoRun }),
  taskStop: (task: string) => call("task_stop", { task }),
  taskPush: (task: string, remote?: string) => call("task_push", remote === undefined ? { task } : { task, remote }),
  taskDiscard: (task: string, force: boolean) => call("task_discard", { task, force }),

  // Project
  /** A folder here or a remote one (`ssh://…`, `user@host:/path`); `installRemote`: the user agreed to copy corral-cli there. */
  openProject: (path: string, installRemote = false) =>
    call("open_project", installRemote ? { path, install_remote: true } : { path }),
  pickProject: () => call("pick_project"),
  closeProject: () => call("close_project"),
  projectInfo: () => call("project_info"),
  recentProjects: () => call("recent_projects"),

  // Policy
  /** Those of `paths` whose names the policy calls secret-like. */
  secretLike: (paths: string[]) => call("secret_like", { paths }),

  // Hooks
  trustHooks: (file: string, text: string) => call("trust_hooks", { file, text }),
  /** A later `corral FOLDER` (handed to this app), once it opened or failed; resolves to the unsubscribe. */
  onLaunch: async (handler: (launch: Launch) => void): Promise<() => void> => {
    const onLaunch = new Channel<Launch>();
    onLaunch.onmessage = handler;
    await call("watch_launches", { on_launch: onLaunch });
    return () => {
      onLaunch.onmessage = () => undefined;
    };
  },
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
  /** The system clipboard's image as PNG bytes (empty: none); a paste WebKitGTK gave no image for. */
  clipboardImage: () => call("clipboard_image"),
  /** A desktop notification with the app's own words; false when the setting is off. */
  notifyUser: (notice: Notice) => call("notify_user", { notice }),
  // Updates of the app itself: the switch, a check, an install (a signature that does not match is refused)
  updateStatus: () => call("update_status"),
  saveUpdateSettings: (settings: UpdateSettings) => call("save_update_settings", { settings }),
  checkUpdate: () => call("check_update"),
  /** The channel messages queued for this window (lib/channels.ts). */
  drainChannels: () => call("drain_channels"),
  installUpdate: (version: string) => call("install_update", { version }),
  // The user's MCP servers (kept in the app's config; values of their variables never come back)
  mcpSettings: () => call("mcp_settings"),
  saveMcpSettings: (settings: McpSettings) => call("save_mcp_settings", { settings }),

  // LLM
  getSettings: () => call("get_settings"),
  saveSettings: (settings: SettingsInput) => call("save_settings", { settings }),
  /** Tests `settings` as given (nothing is saved), or the saved settings. */
  testConnection: (settings?: SettingsInput) => call("test_connection", settings ? { settings } : {}),
  /** The models the server of `settings` (or the saved settings) lists; `not_found` when it has no list. */
  listModels: (settings?: SettingsInput) => call("list_models", settings ? { settings } : {}),
  detectLocalServers: () => call("detect_local_servers"),

  // Conversations (kept by Rust; see docs/ipc.md)
  listConversations: () => call("list_conversations"),
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
  /** Every project's model requests by day, newest first, each day in this window's time zone. */
  usageByDay: (days: number) => call("usage_by_day", { days, utc_offset_minutes: -new Date().getTimezoneOffset() }),

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

/**
 * The window's IPC for the task `task`: every command of the loop's table
 * names it (`task`), so Rust runs it in the task's session, rooted at its
 * worktree, and keeps its conversations apart; the window's own commands
 * are the project's.
 */
export function taskIpc(task: string): Ipc {
  const transport: Transport = {
    call: (command, args, onEvent) => tauri.call(command, { ...args, task } as typeof args, onEvent),
  };
  return { ...ipc, ...agentIpc(transport), ...projectIpc(transport) };
}
