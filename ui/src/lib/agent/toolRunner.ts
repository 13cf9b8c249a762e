// Runs one model turn's tool calls: Rust checks each (check_call: the
// verdict, the preview, a ticket), the user approves what it asks about,
// then each runs by its ticket (run_call, with the answer) in the model's
// order — consecutive read-only calls together, each write or command
// alone. An approved call is those two round trips; Rust reads its input
// once.
import { toWireError, wireError } from "../errors";
import { grantChoicesOf } from "../grants";
import { type FrameScheduler, OutputBuffer } from "../outputBuffer";
import type { ApprovalAnswer, CallTag, Risk, Ticket, ToolDisplay, ToolResultBlock, ToolUseBlock, WireError } from "../types";
import type { Consent } from "../ipc";
import { type HookNote, type LoopHooks, hookContext, notesOf } from "./hooks";
import type { AgentIpc, Decision, RunControl } from "./ports";
import { previewOf } from "./preview";
import type { ToolItem } from "./state";
import { DENIED_TEXT, errorBlock, resultBlock, textBlock } from "./transcript";

type Hooks = {
  newId: () => string;
  scheduleFrame?: FrameScheduler;
  updateCard: (id: string, change: Partial<ToolItem>) => void;
  riskOf: (tool: string) => Risk | null;
  /** How the tool's spec says to show it; a tool of an MCP server names its server. */
  displayOf?: (tool: string) => ToolDisplay | undefined;
  /** The error of a call whose input was not a JSON object (see LlmEvent). */
  inputError: (callId: string) => WireError | undefined;
  /** The user turn being answered (its message's id), for checkpoints. */
  turnId?: () => string | undefined;
  /** The window's key of the conversation: its grants may cover a call. */
  conversation?: () => string;
  /** The user allowed something in the conversation (its list changed). */
  granted?: () => void;
  /** The project's hooks: PreToolUse before a call is checked, PostToolUse after it ran. */
  events?: LoopHooks;
};

/**
 * `consent`: the call's ticket (check_call's) with the user's answer if it
 * asked. Rust keeps the preview the card showed with the ticket, so it
 * writes only over the bytes that were shown.
 */
type Gate = { kind: "run"; consent?: Consent; input: Record<string, unknown> } | { kind: "result"; result: ToolResultBlock } | { kind: "cancelled" };
/** `input`: what runs (a PreToolUse hook may have changed the model's). */
type Approved = { use: ToolUseBlock; consent?: Consent; input: Record<string, unknown> };

export class ToolRunner {
  /** Live output of exec_shell calls, by card id. */
  readonly outputs = new Map<string, OutputBuffer>();
  private readonly pending = new Map<string, (answer: Decision | "cancelled") => void>();
  /** What hooks did to each card's call, both events' together. */
  private readonly hookNotes = new Map<string, HookNote[]>();

  constructor(
    private readonly ipc: AgentIpc,
    private readonly hooks: Hooks,
  ) {}

  /** Lets go of the live output and hook notes of the conversation left: its cards show what was saved. */
  forget(): void {
    this.outputs.clear();
    this.hookNotes.clear();
  }

  decide(cardId: string, decision: Decision): void {
    this.pending.get(cardId)?.(decision);
  }

  /** One tool_result per tool_use, in order; calls not reached are cancelled. */
  async runAll(
    uses: ToolUseBlock[],
    control: RunControl,
    cardIds: Map<string, string>,
    cancel: (use: ToolUseBlock) => ToolResultBlock,
  ): Promise<ToolResultBlock[]> {
    const results = new Map<ToolUseBlock, ToolResultBlock>();
    const card = (use: ToolUseBlock): string => cardIds.get(use.id) ?? use.id;
    for (const batch of this.batches(uses)) {
      const approved: Approved[] = [];
      for (const use of batch) {
        if (control.cancelled) break;
        const gate = await this.gate(use, card(use), control);
        if (gate.kind === "run") approved.push({ use, input: gate.input, ...(gate.consent ? { consent: gate.consent } : {}) });
        else if (gate.kind === "result") results.set(use, gate.result);
      }
      if (control.cancelled) break;
      const outputs = await Promise.all(approved.map((a) => this.execute(a, card(a.use), control)));
      approved.forEach((a, i) => results.set(a.use, outputs[i]));
      if (control.cancelled) break;
    }
    return uses.map((use) => results.get(use) ?? cancel(use));
  }

  /** Consecutive read calls form one batch; every other call is its own. */
  private batches(uses: ToolUseBlock[]): ToolUseBlock[][] {
    const batches: ToolUseBlock[][] = [];
    let reads: ToolUseBlock[] = [];
    for (const use of uses) {
      if (this.hooks.riskOf(use.name) === "read") {
        reads.push(use);
        continue;
      }
      if (reads.length > 0) batches.push(reads);
      reads = [];
      batches.push([use]);
    }
    if (reads.length > 0) batches.push(reads);
    return batches;
  }

  private fail(use: ToolUseBlock, id: string, error: unknown): Gate {
    const wire = toWireError(error);
    this.hooks.updateCard(id, { status: "failed", error: wire });
    return { kind: "result", result: errorBlock(use, wire) };
  }

  private async gate(use: ToolUseBlock, id: string, control: RunControl): Promise<Gate> {
    if (this.hooks.riskOf(use.name) === null) {
      return this.fail(use, id, wireError("invalid_input", `There is no tool named \`${use.name}\`.`, "Use one of the tools listed in the system prompt."));
    }
    const inputError = this.hooks.inputError(use.id);
    if (inputError) return this.fail(use, id, inputError);
    const conversation = this.hooks.conversation?.() ?? "";
    // The hooks see the call first: a changed input is what is checked,
    // shown for approval and run.
    const pre = await this.hooks.events?.raise("PreToolUse", { tool: use.name, input: use.input });
    if (pre) this.note(id, notesOf("PreToolUse", pre));
    if (pre?.verdict === "deny") {
      const reason = pre.reason ?? pre.block ?? "a PreToolUse hook refused this call";
      const by = pre.by ?? pre.ran[0];
      this.hooks.updateCard(id, { status: "denied", reason: `Blocked by the hook \`${by}\`: ${reason}` });
      return { kind: "result", result: textBlock(use, `A PreToolUse hook blocked this call: ${reason}`) };
    }
    const input = pre?.updated_input ?? use.input;
    if (pre?.updated_input) this.hooks.updateCard(id, { input, modelInput: use.input });
    let policy: Ticket;
    try {
      policy = await this.ipc.checkCall(use.name, input, conversation);
    } catch (error) {
      return this.fail(use, id, error);
    }
    if (policy.decision === "deny") {
      const error = wireError("denied", policy.reason, "The permission mode forbids this call; do not retry it.");
      this.hooks.updateCard(id, { status: "denied", reason: policy.reason, error });
      return { kind: "result", result: errorBlock(use, error) };
    }
    // The change as Rust computed it with the code that will make it.
    const preview = previewOf(policy, use.input.path);
    if (preview) this.hooks.updateCard(id, { preview });
    const ticket = { ticket: policy.ticket };
    if (pre?.verdict === "ask" && policy.decision === "allow") {
      // A hook's ask asks, whatever the mode would have let run.
      policy = { ...policy, decision: "ask", reason: `The hook \`${pre.by}\` asks: ${pre.reason ?? "approve this call"}` };
    }
    if (pre?.verdict === "allow" && policy.hook_may_answer === true) {
      // A hook's allow stands in for the user's "once", and for no more:
      // Rust says where it may (only the mode's own question).
      return { kind: "run", consent: { ...ticket, approval: { scope: "once" } }, input };
    }
    if (policy.decision === "allow") {
      // Said on the card: which saved rule or grant let it run unasked.
      if (policy.rule) this.hooks.updateCard(id, { rule: policy.rule });
      if (policy.grant) this.hooks.updateCard(id, { grant: policy.grant.grant });
      return { kind: "run", consent: ticket, input };
    }

    const choices = grantChoicesOf(policy);
    this.hooks.updateCard(id, {
      status: "waiting",
      reason: policy.reason,
      ...(policy.network ? { network: true } : {}),
      ...(policy.one_at_a_time ? { oneAtATime: true } : {}),
      ...(policy.proposed_rule ? { proposedRule: policy.proposed_rule } : {}),
      ...(choices ? { grantChoices: choices } : {}),
      ...(policy.paths ? { paths: policy.paths } : {}),
      ...(policy.shown ? { shown: policy.shown } : {}),
    });
    const answer = await this.ask(id, control);
    if (answer === "cancelled") return { kind: "cancelled" };
    if (answer === "deny") {
      this.hooks.updateCard(id, { status: "denied", reason: "You denied this call." });
      return { kind: "result", result: textBlock(use, DENIED_TEXT) };
    }
    // The network comes with an approval that named it, for this call only.
    const network = answer === "network" || policy.network === true;
    const withNetwork = network ? { network } : {};
    let approval: ApprovalAnswer;
    if (answer === "once" || answer === "network") approval = { scope: "once", ...withNetwork };
    else if ("grant" in answer) approval = { scope: "conversation", ...withNetwork, grant: answer.grant };
    else approval = { scope: "always", ...withNetwork, rule: answer.rule };
    return { kind: "run", consent: { ...ticket, approval }, input };
  }

  private ask(id: string, control: RunControl): Promise<Decision | "cancelled"> {
    return new Promise((resolve) => {
      const onCancel = (): void => {
        this.pending.delete(id);
        resolve("cancelled");
      };
      control.hooks.add(onCancel);
      this.pending.set(id, (answer) => {
        this.pending.delete(id);
        control.hooks.delete(onCancel);
        resolve(answer);
      });
    });
  }

  private async execute({ use, consent, input }: Approved, id: string, control: RunControl): Promise<ToolResultBlock> {
    this.hooks.updateCard(id, { status: "running" });
    try {
      // A call that can change the project is checkpointed first, tagged
      // with its turn and card so the window can offer to restore to it.
      const turn = this.hooks.turnId?.();
      const tag: CallTag | undefined =
        this.hooks.riskOf(use.name) === "read" ? undefined : { call_id: id, ...(turn === undefined ? {} : { turn_id: turn }) };
      // A command (its spec shows its output) streams into its panel.
      const display = this.hooks.displayOf?.(use.name);
      const output =
        display?.result === "output"
          ? await this.shell(use, id, consent, control, tag)
          : display?.server !== undefined
            ? await this.stoppable(use, consent, control, tag)
            : tag
              ? await this.ipc.callTool(use.name, use.input, consent, tag)
              : await this.ipc.callTool(use.name, use.input, consent);
      this.hooks.updateCard(id, { status: "done", result: output });
      return await this.afterwards(use, id, input, resultBlock(use, output), output);
    } catch (error) {
      const wire = toWireError(error);
      // A stopped call is the user's doing, not a failure; the model still
      // gets the error (for a command, with its partial output in details).
      this.hooks.updateCard(id, { status: wire.code === "cancelled" ? "cancelled" : "failed", error: wire });
      return errorBlock(use, wire);
    } finally {
      // The grant is held by the call that carried it: the list follows.
      if (consent?.approval?.scope === "conversation") this.hooks.granted?.();
    }
  }

  private note(id: string, notes: HookNote[]): void {
    if (notes.length === 0) return;
    const all = [...(this.hookNotes.get(id) ?? []), ...notes];
    this.hookNotes.set(id, all);
    this.hooks.updateCard(id, { hooks: all });
  }

  /**
   * The PostToolUse hooks of a call that ran: what they say (a block's
   * reason, context) goes to the model with the call's result.
   */
  private async afterwards(use: ToolUseBlock, id: string, input: Record<string, unknown>, block: ToolResultBlock, output: unknown): Promise<ToolResultBlock> {
    const post = await this.hooks.events?.raise("PostToolUse", { tool: use.name, input, response: output });
    if (!post) return block;
    this.note(id, notesOf("PostToolUse", post));
    const said = [post.block === undefined ? null : `A PostToolUse hook says: ${post.block}`, hookContext("PostToolUse", post)].filter((t) => t !== null);
    return said.length === 0 ? block : { ...block, content: `${block.content}\n\n${said.join("\n\n")}` };
  }

  /** A call Stop can end while it runs (an MCP server's tool). */
  private async stoppable(use: ToolUseBlock, consent: Consent | undefined, control: RunControl, tag?: CallTag): Promise<unknown> {
    const runId = this.hooks.newId();
    const onCancel = (): void => void this.ipc.cancel(runId).catch(() => undefined);
    control.hooks.add(onCancel);
    try {
      return await this.ipc.callTool(use.name, use.input, consent, tag, runId);
    } finally {
      control.hooks.delete(onCancel);
    }
  }

  private async shell(use: ToolUseBlock, id: string, consent: Consent | undefined, control: RunControl, tag?: CallTag): Promise<unknown> {
    const runId = this.hooks.newId();
    const buffer = new OutputBuffer(this.hooks.scheduleFrame);
    this.outputs.set(id, buffer);
    this.hooks.updateCard(id, { runId });
    const onCancel = (): void => void this.ipc.cancel(runId).catch(() => undefined);
    control.hooks.add(onCancel);
    try {
      // A stopped command rejects with `cancelled`; what it printed is already in the buffer.
      return await this.ipc.execShell(use.input, consent, runId, (event) => buffer.push(event), tag);
    } finally {
      control.hooks.delete(onCancel);
      buffer.flush();
      this.hooks.updateCard(id, { runId: undefined });
    }
  }
}
