// The conversation's key, under which Rust holds what the user allowed in
// it, and the list of those grants. A new key each time a conversation is
// started or opened: a conversation starts with no grants, and leaving
// one ends its own (Rust drops them; nothing can use the old key again).
import type { GrantEntry } from "../types";
import type { AgentIpc } from "./ports";

type GrantIpc = Pick<AgentIpc, "conversationGrants" | "revokeGrant" | "endConversation">;

export class GrantList {
  private key: string;

  constructor(
    private readonly ipc: GrantIpc,
    private readonly newKey: () => string,
    private readonly onChange: (grants: GrantEntry[]) => void,
  ) {
    this.key = newKey();
  }

  /** The key of the conversation shown. */
  get conversation(): string {
    return this.key;
  }

  /** The conversation shown was left: its grants end, the next one has none. */
  restart(): void {
    const left = this.key;
    this.key = this.newKey();
    this.onChange([]);
    void this.ipc.endConversation(left).catch(() => undefined);
  }

  /** Asks Rust for the list again (after the user allowed something). */
  async refresh(): Promise<void> {
    const key = this.key;
    const grants = await this.ipc.conversationGrants(key).catch(() => null);
    if (grants && key === this.key) this.onChange(grants);
  }

  /** Revokes one grant; the list is what Rust holds after. */
  async revoke(id: string): Promise<void> {
    const key = this.key;
    const left = await this.ipc.revokeGrant(key, id);
    if (key === this.key) this.onChange(left);
  }
}
