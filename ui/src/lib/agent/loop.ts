// The agent loop: plan → tools → report. Plain TypeScript, no framework; the
// Rust side is reached only through the `AgentIpc` functions passed in, and
// the UI only reads `state` and calls send / retry / stop / decide. Its parts:
// what the model is sent (outgoing.ts), what the server says of the model
// (modelFacts.ts), fitting the window (compaction.ts), one turn's stream
// (turnStream.ts), its tool round (toolRound.ts), the history (keeping.ts)
// and what the window shows (board.ts).
import { toWireError } from "../errors";
import type { FrameScheduler, OutputBuffer } from "../outputBuffer";
import type { Readable } from "../store";
import type { Appended, Block, ConversationData, ImageBlock, Message, ToolSpec, ToolUseBlock, WireError } from "../types";
import { isContextOverflow, TokenEstimate } from "./context";
import { type InstructionSource, PROJECT_INSTRUCTIONS } from "./instructions";
import { type CommandFinder, expandMessage } from "./slashCommands";
import { skillsOf } from "./skills";
import { Board } from "./board";
import { ContextFitter } from "./compaction";
import { fromEntries } from "./conversation";
import { GrantList } from "./grantList";
import { LoopHooks, blockedBy, hookContext } from "./hooks";
import type { Journal } from "./journal";
import { Keeping } from "./keeping";
import { ModelFacts } from "./modelFacts";
import { Outgoing } from "./outgoing";
import { PasteShelf } from "./pastes";
import type { AgentIpc, Decision, RunControl } from "./ports";
import { emptyState, type AgentState, type Cut } from "./state";
import { ToolRound } from "./toolRound";
import { ToolRunner } from "./toolRunner";
import { type AgentFinder, builtInAgents } from "./agentFiles";
import { everyCard, Subagents } from "./subagents";
import { type AgentType, BUILT_IN_AGENTS } from "./subagentTypes";
import { streamTurn } from "./turnStream";
import { usageOfSummary } from "./usage";
import { sandboxNotice } from "../sandboxNotice";
import { appendUserContent } from "./transcript";

export type { AgentIpc, Decision, RunControl } from "./ports";
export { COUNT_WAIT_MS } from "./modelFacts";
export { IMAGE_LEFT_OUT } from "./outgoing";
export { CUT_OFF_TEXT } from "./toolRound";

export type AgentOptions = {
  projectRoot: string;
  /** Model calls per user message before the loop pauses and offers Continue. */
  maxTurns?: number;
  newId?: () => string;
  scheduleFrame?: FrameScheduler;
  /** Finds the project's instructions (default: through read_file). */
  instructions?: InstructionSource;
  /** Finds the custom command a `/name args` message invokes (default: the project's and the user's, as Rust lists them). */
  commands?: CommandFinder;
  /** Finds the subagent types (default: the built-ins; the hosts add the project's, `projectAgents`). */
  agents?: AgentFinder;
  /** A conversation from the history to go on with; none starts a new one. */
  conversation?: ConversationData | null;
  /** Each entry stored in the history (the first one names a new conversation). */
  onAppended?: (appended: Appended) => void;
  /** How long a send waits for the server's count of the prefix (default `COUNT_WAIT_MS`). */
  countWaitMs?: number;
};

export const DEFAULT_MAX_TURNS = 100;

export class AgentLoop {
  readonly state: Readable<AgentState>;
  private readonly board: Board;
  private readonly outgoing: Outgoing;
  private readonly facts: ModelFacts;
  private readonly fitter: ContextFitter;
  private readonly round: ToolRound;
  private readonly keeping: Keeping;
  private readonly streamParts: Parameters<typeof streamTurn>[0];
  private specs: ToolSpec[] | null = null;
  private control: RunControl | null = null;
  private readonly estimate = new TokenEstimate();
  private readonly tools: ToolRunner;
  private readonly subagents: Subagents;
  /** The subagent types, found again at the start of each run. */
  private agentTypes: readonly AgentType[] = BUILT_IN_AGENTS;
  private readonly newId: () => string;
  /** The conversation's key and what the user allowed in it. */
  private readonly grants: GrantList;
  /** The user message being answered: checkpoints are taken in its name. */
  private turnId: string | undefined;
  /** Whether it was said that commands ran without the namespaces (once). */
  private sandboxNoted = false;
  /** The project's hooks, raised at the loop's events. */
  private readonly hooks: LoopHooks;
  /** Whether SessionStart was raised for the conversation shown. */
  private sessionStarted = false;

  constructor(
    private readonly ipc: AgentIpc,
    private readonly options: AgentOptions,
  ) {
    const newId = (this.newId = options.newId ?? (() => crypto.randomUUID()));
    this.board = new Board(newId, (items) => this.keeping.recordItems(items));
    this.state = this.board.state;
    const window = () => this.facts.contextWindow.window;
    this.outgoing = new Outgoing(options.projectRoot, window, () => [this.subagents.tool()]);
    this.facts = new ModelFacts(ipc, this.estimate, {
      specs: () => this.specs,
      prefix: (specs) => this.outgoing.prefix(specs),
      onModel: (model) => this.board.patch({ price: model.price ?? null }),
      countWaitMs: options.countWaitMs,
    });
    this.fitter = new ContextFitter(ipc, newId, this.outgoing, this.facts, this.estimate, this.board, async (trigger) => {
      await this.hooks.raise("PreCompact", { trigger });
    });
    const showMeter = (used: number) => this.fitter.showMeter(used);
    const instructions = options.instructions ?? PROJECT_INSTRUCTIONS;
    this.hooks = new LoopHooks(ipc, () => this.keeping.journal.conversation ?? this.grants.conversation, (text) => this.board.notice(text));
    // Its own keys: the card ids' sequence is not touched.
    this.grants = new GrantList(ipc, () => crypto.randomUUID(), (grants) => this.board.patch({ grants }));
    this.subagents = new Subagents({
      ipc,
      newId,
      board: this.board,
      projectRoot: options.projectRoot,
      specs: () => this.specs,
      window,
      instructions,
      types: () => this.agentTypes,
      turnId: () => this.turnId,
      conversation: () => this.grants.conversation,
      granted: () => void this.grants.refresh(),
      scheduleFrame: options.scheduleFrame,
      events: this.hooks,
    });
    const subagents = this.subagents;
    this.round = new ToolRound({ ipc, newId, board: this.board, outgoing: this.outgoing, specs: () => this.specs, window, instructions, subagents });
    this.tools = new ToolRunner(ipc, {
      newId,
      scheduleFrame: options.scheduleFrame,
      updateCard: (id, change) => {
        this.board.updateCard(id, change);
        this.noteSandbox(change.result);
      },
      riskOf: (name) => this.specs?.find((s) => s.name === name)?.risk ?? null,
      displayOf: (name) => this.specs?.find((s) => s.name === name)?.display,
      inputError: (callId) => this.round.inputErrors.get(callId),
      turnId: () => this.turnId,
      conversation: () => this.grants.conversation,
      granted: () => void this.grants.refresh(),
      events: this.hooks,
    });
    this.streamParts = { ipc, newId, board: this.board, round: this.round, estimate: this.estimate, window, showMeter };
    this.keeping = new Keeping(ipc, newId, this.board, {
      onAppended: options.onAppended,
      resume: (opened) => this.outgoing.resume(opened),
      whole: (entries) => (this.outgoing.pastes = PasteShelf.fromEntries(entries)),
      estimate: (journal) => {
        if (this.specs && this.facts.model !== undefined) this.estimateShown();
        else void this.estimateOpened(journal);
      },
    });
    if (options.conversation) this.load(options.conversation);
  }

  /** The window's key of the conversation shown (its grants and answers about domains). */
  get conversationKey(): string {
    return this.grants.conversation;
  }

  /** The conversation's id in the history; null until its first entry is stored. */
  get conversationId(): string | null {
    return this.keeping.journal.conversation;
  }

  /**
   * Where a fork from the user message `itemId` cuts: "edit" keeps what came
   * before the message, "here" also the message and the work it started (up
   * to the next message of the user). Null until the message is stored.
   */
  forkPoint(itemId: string, mode: "edit" | "here"): number | null {
    return this.keeping.forkPoint(itemId, mode);
  }

  /**
   * Stores what is still unsaved, of this conversation and of those left,
   * before another is opened; resolves once each is stored or has failed
   * again (nothing is dropped: a failure is tried again later).
   */
  saveAll(): Promise<void> {
    return this.keeping.saveAll();
  }

  /** Entries recorded in this loop and not stored yet, in every conversation. */
  get unsaved(): number {
    return this.keeping.unsaved;
  }

  /** Why the conversation shown has entries not stored (its last append's error), while it has. */
  get saveError(): WireError | null {
    return this.keeping.saveError;
  }

  /** The project folder the tools resolve paths against. */
  get projectRoot(): string {
    return this.options.projectRoot;
  }

  /** The provider transcript, as the next request would send it. */
  get transcript(): Message[] {
    return this.outgoing.messages;
  }

  /**
   * Goes on with a conversation from the history (the loop must be idle).
   * It may come brief (long tool results left out) or in part (its last
   * entries, fewer than `summary.entries`): it is shown at once, and its
   * whole is fetched behind; nothing is sent until that is in.
   */
  load(conversation: ConversationData): void {
    if (this.control) return;
    const opened = fromEntries(conversation.entries);
    this.forgetOutputs();
    this.outgoing.restart(PasteShelf.fromEntries(conversation.entries));
    this.outgoing.resume(opened);
    this.round.foldersSeen = new Set();
    this.board.set({ ...emptyState(), items: opened.items, usage: usageOfSummary(conversation.summary) });
    this.grants.restart();
    this.sessionStarted = false;
    const partial = this.keeping.open(conversation, opened);
    // A part's transcript would give the meter a wrong size: it waits for the whole.
    if (!partial) void this.estimateOpened(this.keeping.journal);
  }

  /**
   * Resolves once the conversation shown is whole (at once when it was
   * opened whole); a failed fetch resolves it too (tried again on send).
   */
  loaded(): Promise<void> {
    return this.keeping.loaded();
  }

  /**
   * Sends the person's message: its text and the images pasted or dropped
   * with it. When the model refuses the images (`images_unsupported`), the
   * message is taken back (see `withdraw`) and offered to the composer
   * again as `returned`, so nothing typed or attached is lost; so is a
   * message that is not sent at all (a run is on, the rest of a
   * conversation opened in part could not be had, or its images are over
   * the limits).
   */
  async send(text: string, images: ImageBlock[] = []): Promise<void> {
    if (text.trim() === "" && images.length === 0) return;
    // Not taken (a run is on, or the rest of the conversation could not
    // be had): the message goes back to the box rather than being lost.
    if (this.control || !(await this.keeping.ready()) || this.control) {
      this.board.patch({ returned: { text, images } });
      return;
    }
    const over = this.outgoing.imagesOverLimit(images.length);
    if (over) {
      this.board.patch({ error: over, returned: { text, images } });
      return;
    }
    // The window keeps what was typed; the model gets the command's text.
    const shelved = await this.shelvePaste(await expandMessage(this.ipc, text, this.options.commands));
    const sentText = shelved.text;
    if (this.control) {
      this.board.patch({ returned: { text, images } });
      return;
    }
    const context = await this.promptHooks(sentText);
    if (context === null || this.control) {
      this.board.patch({ returned: { text, images } });
      return;
    }
    const said = context.map((c) => ({ type: "text" as const, text: c }));
    const content: Block[] = [...(text.trim() === "" ? [] : [{ type: "text" as const, text: sentText }]), ...images, ...said];
    this.outgoing.messages = appendUserContent(this.outgoing.messages, content);
    const sent = this.outgoing.messages.at(-1);
    this.outgoing.freshImages = new Set(images);
    const turn = this.newId();
    this.turnId = turn;
    this.board.patch({ returned: null });
    this.board.addItem({ kind: "user", id: turn, text, ...(images.length > 0 ? { images } : {}), ...(shelved.cut ? { cut: shelved.cut } : {}) });
    this.keeping.record({ role: "user", content });
    await this.run();
    const error = this.board.get().error;
    if (images.length > 0 && error?.details?.reason === "images_unsupported" && this.turnId === turn) this.withdraw(turn, sent, content.length, text, images);
  }

  /**
   * SessionStart (at a conversation's first message here) and
   * UserPromptSubmit: the context they add for the model, or null when a
   * hook blocked the prompt (it is not sent, and the user is told why).
   */
  private async promptHooks(prompt: string): Promise<string[] | null> {
    await this.hooks.refresh();
    const context: string[] = [];
    if (!this.sessionStarted) {
      this.sessionStarted = true;
      const trigger = this.keeping.journal.conversation ? "resume" : "startup";
      const started = await this.hooks.raise("SessionStart", { trigger });
      const added = hookContext("SessionStart", started);
      if (added) {
        context.push(added);
        this.board.notice("The SessionStart hooks added context for the agent.", added);
      }
    }
    const submitted = await this.hooks.raise("UserPromptSubmit", { prompt });
    const blocked = submitted && blockedBy(submitted);
    if (blocked) {
      this.board.notice(`The hook \`${blocked.by}\` blocked this message: ${blocked.reason}`);
      return null;
    }
    const added = hookContext("UserPromptSubmit", submitted);
    if (added) {
      context.push(added);
      this.board.notice("The UserPromptSubmit hooks added context for the agent.", added);
    }
    return context;
  }

  /**
   * The person's text as the model is sent it: a part and a note when it is
   * larger than its share of the window (with how much of it the model gets).
   */
  private async shelvePaste(text: string): Promise<{ text: string; cut: Cut | null }> {
    try {
      this.specs ??= await this.ipc.toolSpecs();
      await this.facts.ask();
    } catch {
      return { text, cut: null };
    }
    return this.outgoing.pastes.shelve(text, this.fitter.resultShare(this.specs));
  }

  /**
   * Takes back the user's last message, which the model refused for its
   * images: its blocks leave the transcript, its item the window (stored
   * again as `withdrawn`, so the conversation opened again leaves it out
   * too), and its text and images go back to the composer. Only while
   * `sent`, the message `send` appended (or merged the blocks into), is
   * still the last: after a tool round in the same turn the last user
   * message holds tool results, and cutting it would corrupt the
   * transcript, so the error is only shown.
   */
  private withdraw(turn: string, sent: Message | undefined, blocks: number, text: string, images: ImageBlock[]): void {
    const messages = this.outgoing.messages;
    const last = messages.at(-1);
    const item = this.board.get().items.find((i) => i.id === turn);
    if (sent === undefined || last !== sent || item?.kind !== "user") return;
    const kept = last.content.slice(0, Math.max(0, last.content.length - blocks));
    this.outgoing.messages = kept.length > 0 ? [...messages.slice(0, -1), { role: "user", content: kept }] : messages.slice(0, -1);
    this.board.removeItems(new Set([turn]));
    this.keeping.journal.recordItems([{ kind: "user", id: turn, text: "", withdrawn: true }]);
    this.turnId = undefined;
    this.board.patch({ returned: { text, images } });
  }

  /** Re-sends the last turn after a provider failure; the conversation is kept. */
  async retry(): Promise<void> {
    if (this.control || !(await this.keeping.ready())) return;
    if (this.control || this.outgoing.messages.at(-1)?.role !== "user") return;
    await this.run();
  }

  /** Goes on after the run paused at its turn budget. */
  async continue(): Promise<void> {
    await this.retry();
  }

  /** Forgets what is known of the model (the settings changed). */
  resetModel(): void {
    this.facts.reset();
    this.outgoing.imagesRefused = false;
  }

  /**
   * The settings changed: forgets the model, asks the server about the new
   * one and shows the meter against its window at once (when idle).
   */
  async refreshModel(): Promise<void> {
    this.resetModel();
    if (this.control) return;
    try {
      this.specs ??= await this.ipc.toolSpecs();
      await this.facts.ask();
    } catch {
      return; // the meter comes with the next request
    }
    this.estimateShown();
  }

  /** Summarizes the older part of the conversation now (the Compact button). */
  async compact(): Promise<void> {
    if (this.control || !(await this.keeping.ready()) || this.control) return;
    const control: RunControl = { cancelled: false, hooks: new Set() };
    this.control = control;
    this.board.patch({ busy: true });
    try {
      await this.hooks.refresh();
      await this.fitter.compact(control, true, "manual");
    } finally {
      if (control.cancelled) this.board.notice("Stopped.");
      this.control = null;
      this.board.patch({ busy: false });
      // The meter shows the transcript as the next request will send it, summary and all.
      this.estimateShown();
      await this.keeping.save();
    }
  }

  stop(): void {
    const control = this.control;
    if (!control || control.cancelled) return;
    control.cancelled = true;
    for (const hook of [...control.hooks]) hook();
  }

  dismissError(): void {
    this.board.patch({ error: null });
  }

  /** Starts a new conversation; the one shown stays in the history as it is. */
  async clear(): Promise<void> {
    if (this.control) return;
    await this.keeping.leaveForNew();
    this.forgetOutputs();
    this.outgoing.restart();
    this.round.foldersSeen = new Set();
    this.board.set(emptyState());
    this.grants.restart();
    this.keeping.startNew();
    this.sessionStarted = false;
  }

  /**
   * The conversation left: its commands' live output goes (its cards
   * show the results saved with them), or a long session would keep
   * every command's output it ever ran.
   */
  private forgetOutputs(): void {
    this.tools.forget();
    this.subagents.forget();
  }

  /** The key under which Rust holds what the user allowed in this conversation. */
  get grantsKey(): string {
    return this.grants.conversation;
  }

  /** Revokes one thing the user allowed in this conversation. */
  revokeGrant(id: string): Promise<void> {
    return this.grants.revoke(id);
  }

  /** The user's answer to an approval card. */
  decide(cardId: string, decision: Decision): void {
    this.tools.decide(cardId, decision);
    this.subagents.decide(cardId, decision);
  }

  /** Stops one running command; the loop goes on with its partial output. */
  stopCommand(cardId: string): void {
    const card = everyCard(this.board.get().items).find((i) => i.id === cardId);
    if (card?.runId) void this.ipc.cancel(card.runId).catch(() => undefined);
  }

  outputFor(cardId: string): OutputBuffer | undefined {
    return this.tools.outputs.get(cardId) ?? this.subagents.outputFor(cardId);
  }

  private async run(): Promise<void> {
    const control: RunControl = { cancelled: false, hooks: new Set() };
    this.control = control;
    this.board.patch({ busy: true, error: null, retrying: null, turnLimitReached: false });
    const maxTurns = this.options.maxTurns ?? DEFAULT_MAX_TURNS;
    const out = this.outgoing;
    let overflowRetried = false;
    let stopHookActive = false;
    this.fitter.newTurn();
    try {
      await this.hooks.refresh();
      // Asked each run: the programs the user added may have changed.
      this.specs = await this.ipc.toolSpecs();
      const known = this.specs.map((spec) => spec.name);
      this.agentTypes = await (this.options.agents ?? builtInAgents)(this.ipc, known).catch(() => BUILT_IN_AGENTS);
      await this.loadModelFacts();
      for (let turn = 1; ; turn++) {
        const unfit = await this.fitter.fit(control, this.specs);
        // The cards of results just cut to fit say how much the model gets.
        this.round.noteCuts(out.messages.at(-1));
        if (unfit) {
          this.board.patch({ error: unfit });
          break;
        }
        if (control.cancelled) break;
        const outcome = await streamTurn(this.streamParts, control, out.request(this.specs));
        if (outcome.error && isContextOverflow(outcome.error) && !overflowRetried && !control.cancelled) {
          // Compacted and sent again once, by itself; a second overflow is shown.
          overflowRetried = true;
          const unfit = this.fitter.noteOverflow(outcome.error, this.specs);
          if (unfit) {
            // Compacting cannot help when the fixed prompt alone does not fit.
            this.board.patch({ error: unfit });
            break;
          }
          if (this.fitter.squeeze() || (await this.fitter.compact(control, true))) {
            turn--;
            continue;
          }
        }
        if (outcome.error && out.refusesEarlierImages(outcome.error) && !control.cancelled) {
          // Sent again without them (once: then they are left out).
          out.imagesRefused = true;
          this.board.notice("This model takes no images: the conversation's earlier images are left out of what it is sent from now on. They stay in the conversation.");
          turn--;
          continue;
        }
        if (outcome.error) {
          this.board.patch({ error: outcome.error });
          break;
        }
        if (outcome.message) {
          out.messages = [...out.messages, outcome.message];
          this.keeping.record(outcome.message);
        }
        const uses = outcome.message?.content.filter((b): b is ToolUseBlock => b.type === "tool_use") ?? [];
        if (uses.length > 0 && outcome.stopReason === "max_tokens") {
          // A reply cut off mid-way may carry garbled calls: none of them runs.
          out.messages = [...out.messages, { role: "user", content: uses.map((use) => this.round.cutOffCard(use)) }];
          this.keeping.record(out.messages[out.messages.length - 1]);
          this.board.notice(
            `The reply was cut off at its token limit; its ${uses.length === 1 ? "tool call was" : `${uses.length} tool calls were`} not run. Send a message to let the agent try again.`,
          );
          break;
        }
        if (uses.length === 0) {
          if (outcome.stopReason === "max_tokens") this.board.notice("The reply hit the max tokens limit and was cut off.");
          else if (!control.cancelled && !outcome.message) this.board.notice("The model sent an empty reply.");
          if (control.cancelled || !(await this.stopHooks(stopHookActive))) break;
          stopHookActive = true;
          if (turn >= maxTurns) {
            this.board.notice(`Paused after ${maxTurns} model turns. Continue to let the agent go on.`);
            this.board.patch({ turnLimitReached: true });
            break;
          }
          continue;
        }
        const content = await this.round.run(uses, this.specs, control, this.tools);
        out.messages = [...out.messages, { role: "user", content }];
        // What its subagents used is stored with the round's results.
        this.keeping.record({ role: "user", content });
        if (control.cancelled) break;
        // Each finished round is stored before the next turn starts.
        await this.keeping.save();
        if (turn >= maxTurns) {
          this.board.notice(`Paused after ${maxTurns} model turns. Continue to let the agent go on.`);
          this.board.patch({ turnLimitReached: true });
          break;
        }
      }
    } catch (error) {
      this.board.patch({ error: toWireError(error) });
    } finally {
      if (control.cancelled) this.board.notice("Stopped.");
      this.control = null;
      this.board.patch({ busy: false, retrying: null });
      // After Stop the meter shows what the next request would send.
      if (control.cancelled) this.estimateShown();
      await this.keeping.save();
    }
  }

  /**
   * The Stop hooks, as the model ends its turn: true when one blocked, and
   * the model was given its reason to go on with.
   */
  private async stopHooks(active: boolean): Promise<boolean> {
    const said = await this.hooks.raise("Stop", { stop_hook_active: active });
    const blocked = said?.block === undefined ? null : blockedBy(said);
    if (!blocked) return false;
    this.board.notice(`The hook \`${blocked.by}\` kept the agent going: ${blocked.reason}`);
    const text = `A Stop hook says the work is not done: ${blocked.reason}`;
    this.outgoing.messages = appendUserContent(this.outgoing.messages, [{ type: "text", text }]);
    this.keeping.record(this.outgoing.messages[this.outgoing.messages.length - 1]);
    return true;
  }

  /**
   * The meter of a conversation opened: the size of the request its next
   * message would send, estimated as before a send (without the project's
   * instructions, read at that send). Nothing is sent.
   */
  private async estimateOpened(journal: Journal): Promise<void> {
    try {
      this.specs ??= await this.ipc.toolSpecs();
      await this.facts.ask();
    } catch {
      return; // the meter comes with the next request
    }
    if (this.keeping.journal !== journal) return;
    this.board.patch({ price: this.facts.model?.price ?? null });
    this.estimateShown();
  }

  /** Shows the next request's estimated size, when idle and the tools are known. */
  private estimateShown(): void {
    if (this.control || !this.specs || this.facts.model === undefined) return;
    this.fitter.showMeter(this.estimate.tokens(this.outgoing.request(this.specs)));
  }

  /** The model's context window, the project's instructions and the skills, once per conversation. */
  private async loadModelFacts(): Promise<void> {
    const model = await this.facts.ask();
    if (!this.facts.noted) {
      this.facts.noted = true;
      if (model.supports_tools === false) {
        this.board.notice(
          "The server says this model's chat template cannot call tools, so the agent can only talk. Give the server a template that can (llama.cpp: --jinja, and --chat-template-file with one that supports tools when the model's own does not), or pick another model.",
        );
      }
    }
    this.outgoing.skills ??= skillsOf(await this.ipc.customization().catch(() => ({ skills: [] })));
    if (this.outgoing.instructions === undefined) {
      this.outgoing.instructions = await (this.options.instructions ?? PROJECT_INSTRUCTIONS).root(this.ipc);
      // A conversation opened again already shows them, unless they changed since.
      const found = this.outgoing.instructions;
      const shown = found && this.board.get().items.some((item) => item.kind === "notice" && item.text === found.notice && item.detail === found.text);
      if (found && !shown) this.board.notice(found.notice, found.text);
    }
  }

  /** Says once per conversation that commands ran without the namespaces. */
  private noteSandbox(result: unknown): void {
    const text = this.sandboxNoted ? null : sandboxNotice(result);
    if (text === null) return;
    this.sandboxNoted = true;
    this.board.notice(text);
  }
}
