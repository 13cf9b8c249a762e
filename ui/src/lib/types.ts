// Types shared with the Rust app. They mirror docs/ipc.md exactly; when that
// contract changes, change this file first.

export type ErrorCode =
  | "no_project_open"
  | "invalid_input"
  | "not_found"
  | "already_exists"
  | "is_directory"
  | "not_a_directory"
  | "not_text"
  | "too_large"
  | "path_outside_root"
  | "path_protected"
  | "approval_required"
  | "denied"
  | "permission_denied"
  | "no_match"
  | "ambiguous_match"
  | "stale_file"
  | "invalid_regex"
  | "command_not_allowed"
  | "argument_not_allowed"
  | "cancelled"
  | "io"
  | "llm_auth"
  | "llm_rate_limited"
  | "llm_unavailable"
  | "llm_bad_response"
  // Codes added on the Rust side later still arrive as strings.
  | (string & {});

export type WireError = {
  code: ErrorCode;
  message: string;
  hint: string;
  retryable: boolean;
  details: Record<string, unknown>;
};

export type ShellEvent = { stream: "stdout" | "stderr"; data: string };

export type ProjectInfo = { root: string; name: string };

export type Risk = "read" | "write" | "shell";
export type ToolSpec = { name: string; description: string; input_schema: object; risk: Risk };

export type PolicyDecision =
  | { decision: "allow" }
  | { decision: "ask"; reason: string }
  | { decision: "deny"; reason: string };

/** The change a write, edit or delete would make, computed by the Rust code that makes it. */
export type ToolPreview = { path: string; before: string; after: string; diff: string };
/** `check_policy`'s answer: the decision, and the preview (or why there is none). */
export type PolicyCheck = PolicyDecision & { preview?: ToolPreview; preview_error?: WireError };

export type ApprovalScope = "once" | "session";

export type Role = "user" | "assistant";
export type TextBlock = { type: "text"; text: string };
export type ToolUseBlock = { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };
export type ToolResultBlock = { type: "tool_result"; tool_use_id: string; content: string; is_error?: boolean };
export type Block = TextBlock | ToolUseBlock | ToolResultBlock;
export type Message = { role: Role; content: Block[] };

export type LlmTool = { name: string; description: string; input_schema: object };
export type LlmRequest = { system: string; messages: Message[]; tools: LlmTool[] };

export type LlmEvent =
  | { type: "text_delta"; text: string }
  | { type: "tool_call_start"; id: string; name: string }
  | { type: "tool_call_delta"; id: string; json: string }
  | { type: "tool_call_end"; id: string; name: string; input: Record<string, unknown>; input_error?: WireError }
  | { type: "usage"; input_tokens: number; output_tokens: number }
  | { type: "retrying"; attempt: number; delay_ms: number; error: WireError }
  | { type: "done"; stop_reason: string }
  | { type: "error"; error: WireError };

export type Provider = "anthropic" | "openai";
export type Mode = "read_only" | "ask" | "auto_edit" | "full_auto";
export type Settings = {
  provider: Provider;
  base_url: string;
  model: string;
  max_tokens: number;
  mode: Mode;
  has_api_key: boolean;
};
/** `api_key` is write-only: omit it to keep the saved key, "" clears it. */
export type SettingsInput = Omit<Settings, "has_api_key"> & { api_key?: string };

export type ConnectionOk = { ok: true; model: string };
export type LocalServer = { name: string; base_url: string; models: string[] };

// Tool outputs the UI reads fields of (DESIGN.md section 2).
export type DirEntry = { path: string; kind: "file" | "dir" | "symlink"; size?: number };
export type ListDirectoryOutput = { path: string; entries: DirEntry[]; truncated: boolean };
export type ReadFileOutput = {
  path: string;
  content: string;
  start_line: number;
  end_line: number;
  total_lines: number;
  truncated: boolean;
};
export type ShellOutput = {
  command: string;
  args: string[];
  stdout: string;
  stderr: string;
  exit_code: number | null;
  timed_out: boolean;
  duration_ms: number;
  stdout_truncated_bytes: number;
  stderr_truncated_bytes: number;
};
