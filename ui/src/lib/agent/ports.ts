// What the agent loop and its tool runner share: the IPC functions they
// reach Rust through, the user's answer to an approval, and one run's stop
// switch. Its own module so that neither imports the other.
import type { Ipc } from "../ipc";
import type { Grant } from "../types";

export type AgentIpc = Pick<
  Ipc,
  | "llmStream"
  | "cancel"
  | "toolSpecs"
  | "checkCall"
  | "conversationGrants"
  | "revokeGrant"
  | "endConversation"
  | "callTool"
  | "execShell"
  | "appendEntry"
  | "openConversation"
  | "modelInfo"
  | "countPromptTokens"
  | "customization"
  | "skillFile"
> &
  // Optional: a host that serves no hooks (and the loop's tests) leaves them out.
  Partial<Pick<Ipc, "hookStatus" | "runHooks">>;

/**
 * The user's answer to an approval: once ("network": once, with the
 * network), deny, a grant for the conversation (exactly what the user
 * chose), or a rule saved for the project (as the user confirmed it).
 */
export type Decision = "once" | "network" | "deny" | { grant: Grant } | { rule: string };

/** One run of the loop; Stop flips `cancelled` and fires every hook. */
export type RunControl = { cancelled: boolean; hooks: Set<() => void> };
