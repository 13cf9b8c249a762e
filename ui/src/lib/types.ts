// Types shared with the Rust app. The wire types are generated from the
// Rust types into wire.ts (a Rust test fails when the two differ); this
// file re-exports them under the names docs/ipc.md uses.

export type {
  Checkpoint,
  ChangeCounts,
  ChangeStatus,
  CheckpointEntryKind,
  FileChange,
  Skipped,
  Comparison,
  Restored,
  CallUndo,
  ErrorCode,
  WireError,
  Risk,
  Mode,
  PolicyDecision,
  ToolSpec,
  ToolPreview,
  PolicyCheck,
  ApprovalScope,
  ApprovalAnswer,
  Grant,
  GrantEntry,
  CallCheck,
  ShellEvent,
  Role,
  Block,
  Message,
  LlmTool,
  LlmRequest,
  LlmEvent,
  Provider,
  Settings,
  SettingsInput,
  ProjectInfo,
  Launch,
  ConnectionOk,
  ListedModel,
  LlmTarget,
  LocalServer,
  ModelInfo,
  DirEntry,
  ListDirectoryOutput,
  ReadFileOutput,
  ShellOutput,
  SavedRule,
  ShellConfig,
  McpServerConfig,
  McpSettings,
  McpSettingsView,
  McpState,
  McpServerStatus,
  IndexStatus,
  TreeChanges,
  Notice,
  Started,
  ListeningPort,
  CommandOutput,
  ConversationSummary,
  ForkPoint,
  StoredEntry,
  ConversationData,
  NewEntry,
  TokenUsage,
  Appended,
  SearchHit,
  DomainQuestion,
  Severity,
  Diagnostic,
  FileDiagnostics,
  DiagnosticsReport,
  Location,
  Symbol,
  ToolDisplay,
} from "./wire";
import type { Block } from "./wire";

export type TextBlock = Extract<Block, { type: "text" }>;
export type ToolUseBlock = Extract<Block, { type: "tool_use" }>;
export type ToolResultBlock = Extract<Block, { type: "tool_result" }>;
export type ImageBlock = Extract<Block, { type: "image" }>;

// Tool outputs the UI reads fields of (docs/ipc.md).

/** Which user turn and which card a tool call belongs to (`call_tool`'s `turn_id`, `call_id`). */
export type CallTag = { turn_id?: string; call_id?: string };
