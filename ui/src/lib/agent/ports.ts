// What the agent loop and its tool runner share: the IPC functions they
// reach Rust through, the user's answer to an approval, and one run's stop
// switch. Its own module so that neither imports the other.
import type { Ipc } from "../ipc";
import type { ApprovalScope } from "../types";

export type AgentIpc = Pick<
  Ipc,
  | "llmStream"
  | "cancel"
  | "toolSpecs"
  | "checkPolicy"
  | "approveCall"
  | "callTool"
  | "execShell"
  | "appendEntry"
  | "openConversation"
  | "modelInfo"
>;

/** The user's answer to an approval; "network": once, with the network. */
export type Decision = ApprovalScope | "network" | "deny";

/** One run of the loop; Stop flips `cancelled` and fires every hook. */
export type RunControl = { cancelled: boolean; hooks: Set<() => void> };
