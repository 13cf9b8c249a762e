// Generated from the command lists (crates/corral-host/src/table.rs, src-tauri/src/commands/mod.rs) by
// src-tauri/tests/all/command_list.rs; do not edit.
// After changing the list: UPDATE_COMMANDS=1 cargo test -p corral --test all -- command_list::
import type { Channel } from "@tauri-apps/api/core";
import type { Appended, Applied, ApprovalAnswer, CallUndo, Checkpoint, CommandOutput, Comparison, ConnectionOk, ConversationData, ConversationSummary, Customization, DayUsage, DomainQuestion, GrantEntry, HookOutcome, HookRequest, HookStatus, IndexStatus, InstalledUpdate, Launch, ListedModel, LlmEvent, LlmRequest, LlmTarget, LocalServer, McpServerStatus, McpSettings, McpSettingsView, Merged, ModelInfo, NewEntry, Notice, ProjectInfo, Restored, SandboxLimits, SavedRule, SearchHit, Settings, SettingsInput, SetupSource, ShellConfig, ShellEvent, Side, SkillFile, TaskDiff, TaskInfo, TaskList, TaskPlace, Ticket, ToolSpec, TreeChanges, UpdateOffer, UpdateSettings, UpdateStatus } from "./types";

/** Every command of the app: its arguments and what it resolves to (docs/ipc.md). */
export type Commands = {
  run_call: { args: { ticket: string, approval?: ApprovalAnswer, run_id?: string, on_output?: Channel<ShellEvent>, turn_id?: string, call_id?: string }; result: unknown };
  call_tool: { args: { name: string, input: Record<string, unknown>, conversation?: string, run_id?: string, on_output?: Channel<ShellEvent>, turn_id?: string, call_id?: string }; result: unknown };
  search_index_status: { args: Record<string, never>; result: IndexStatus };
  tree_changes: { args: { since: number }; result: TreeChanges };
  customization: { args: Record<string, never>; result: Customization };
  skill_file: { args: { source: SetupSource, folder: string, file?: string }; result: SkillFile };
  tool_specs: { args: Record<string, never>; result: ToolSpec[] };
  check_call: { args: { tool: string, input: Record<string, unknown>, conversation?: string }; result: Ticket };
  conversation_grants: { args: { conversation: string }; result: GrantEntry[] };
  revoke_grant: { args: { conversation: string, id: string }; result: GrantEntry[] };
  end_conversation: { args: { conversation: string }; result: null };
  answer_domain: { args: { id: string, allow: boolean }; result: boolean };
  cancel: { args: { run_id: string }; result: null };
  hook_status: { args: Record<string, never>; result: HookStatus };
  run_hooks: { args: { request: HookRequest }; result: HookOutcome };
  list_processes: { args: Record<string, never>; result: CommandOutput[] };
  process_output: { args: { run_id: string, since_byte?: number }; result: CommandOutput };
  stop_process: { args: { run_id: string }; result: CommandOutput };
  mcp_status: { args: Record<string, never>; result: McpServerStatus[] };
  restart_mcp_server: { args: { name: string }; result: McpServerStatus[] };
  list_checkpoints: { args: Record<string, never>; result: Checkpoint[] };
  checkpoint_diff: { args: { id: string, path?: string }; result: Comparison };
  compare_checkpoints: { args: { from: string, to?: string }; result: Comparison };
  restore_checkpoint: { args: { id: string, path?: string }; result: Restored };
  call_undo_diff: { args: { id: string }; result: CallUndo };
  undo_call: { args: { id: string }; result: Restored };
  checkpoint_notice: { args: Record<string, never>; result: string | null };
  llm_stream: { args: { run_id: string, request: LlmRequest, target?: LlmTarget, on_event: Channel<LlmEvent> }; result: null };
  model_info: { args: { settings?: SettingsInput }; result: ModelInfo };
  count_prompt_tokens: { args: { request: LlmRequest, target?: LlmTarget }; result: number | null };
  open_conversation: { args: { id: string, elide_over?: number, before_seq?: number, last?: number }; result: ConversationData };
  append_entry: { args: { conversation?: string, entry: NewEntry }; result: Appended };
  open_project: { args: { path: string, install_remote?: boolean }; result: ProjectInfo };
  watch_launches: { args: { on_launch: Channel<Launch> }; result: null };
  pick_project: { args: Record<string, never>; result: ProjectInfo | null };
  close_project: { args: Record<string, never>; result: null };
  project_info: { args: Record<string, never>; result: ProjectInfo | null };
  recent_projects: { args: Record<string, never>; result: ProjectInfo[] };
  clipboard_image: { args: Record<string, never>; result: ArrayBuffer };
  notify_user: { args: { notice: Notice }; result: boolean };
  domain_questions: { args: { on_question: Channel<DomainQuestion> }; result: null };
  secret_like: { args: { paths: string[] }; result: string[] };
  trust_hooks: { args: { file: string, text: string }; result: HookStatus };
  shell_config: { args: Record<string, never>; result: ShellConfig };
  save_programs: { args: { global: string[], project: string[] | null }; result: ShellConfig };
  remove_rule: { args: { rule: SavedRule }; result: ShellConfig };
  sandbox_limits: { args: Record<string, never>; result: SandboxLimits };
  mcp_settings: { args: Record<string, never>; result: McpSettingsView };
  save_mcp_settings: { args: { settings: McpSettings }; result: McpServerStatus[] };
  get_settings: { args: Record<string, never>; result: Settings };
  save_settings: { args: { settings: SettingsInput }; result: Settings };
  test_connection: { args: { settings?: SettingsInput }; result: ConnectionOk };
  list_models: { args: { settings?: SettingsInput }; result: ListedModel[] };
  detect_local_servers: { args: Record<string, never>; result: LocalServer[] };
  list_conversations: { args: Record<string, never>; result: ConversationSummary[] };
  rename_conversation: { args: { id: string, title: string }; result: ConversationSummary };
  set_conversation_model: { args: { id: string, target: LlmTarget | null }; result: ConversationSummary };
  delete_conversation: { args: { id: string }; result: null };
  restore_conversation: { args: { id: string }; result: ConversationSummary };
  fork_conversation: { args: { id: string, before_seq: number }; result: ConversationSummary };
  search_conversations: { args: { query: string }; result: SearchHit[] };
  usage_by_day: { args: { days: number, utc_offset_minutes: number }; result: DayUsage[] };
  conversation_markdown: { args: { id: string }; result: string };
  export_conversation: { args: { id: string }; result: string | null };
  history_notice: { args: Record<string, never>; result: string | null };
  task_new: { args: { name: string, place?: TaskPlace }; result: TaskInfo };
  task_list: { args: Record<string, never>; result: TaskList };
  task_diff: { args: { task: string }; result: TaskDiff };
  task_merge: { args: { task: string, prefer?: Side, auto_run?: string[] }; result: Merged };
  task_apply: { args: { task: string, auto_run?: string[] }; result: Applied };
  task_stop: { args: { task: string }; result: null };
  task_push: { args: { task: string, remote?: string }; result: string };
  task_discard: { args: { task: string, force: boolean }; result: null };
  drain_channels: { args: Record<string, never>; result: [number, number, unknown][] };
  update_status: { args: Record<string, never>; result: UpdateStatus };
  save_update_settings: { args: { settings: UpdateSettings }; result: UpdateStatus };
  check_update: { args: Record<string, never>; result: UpdateOffer | null };
  install_update: { args: { version: string }; result: InstalledUpdate };
};

/** The name of each command the app registers, in the list's order. */
export const COMMAND_NAMES = [
  "run_call",
  "call_tool",
  "search_index_status",
  "tree_changes",
  "customization",
  "skill_file",
  "tool_specs",
  "check_call",
  "conversation_grants",
  "revoke_grant",
  "end_conversation",
  "answer_domain",
  "cancel",
  "hook_status",
  "run_hooks",
  "list_processes",
  "process_output",
  "stop_process",
  "mcp_status",
  "restart_mcp_server",
  "list_checkpoints",
  "checkpoint_diff",
  "compare_checkpoints",
  "restore_checkpoint",
  "call_undo_diff",
  "undo_call",
  "checkpoint_notice",
  "llm_stream",
  "model_info",
  "count_prompt_tokens",
  "open_conversation",
  "append_entry",
  "open_project",
  "watch_launches",
  "pick_project",
  "close_project",
  "project_info",
  "recent_projects",
  "clipboard_image",
  "notify_user",
  "domain_questions",
  "secret_like",
  "trust_hooks",
  "shell_config",
  "save_programs",
  "remove_rule",
  "sandbox_limits",
  "mcp_settings",
  "save_mcp_settings",
  "get_settings",
  "save_settings",
  "test_connection",
  "list_models",
  "detect_local_servers",
  "list_conversations",
  "rename_conversation",
  "set_conversation_model",
  "delete_conversation",
  "restore_conversation",
  "fork_conversation",
  "search_conversations",
  "usage_by_day",
  "conversation_markdown",
  "export_conversation",
  "history_notice",
  "task_new",
  "task_list",
  "task_diff",
  "task_merge",
  "task_apply",
  "task_stop",
  "task_push",
  "task_discard",
  "drain_channels",
  "update_status",
  "save_update_settings",
  "check_update",
  "install_update",
] as const satisfies readonly (keyof Commands)[];

export type CommandName = keyof Commands;
