// What the window shows of the agent loop: its state, and the changes the
// loop's parts make to it (items added, cards updated, notices said). A
// notice is part of the conversation, so it is also handed to the history.
import { type Readable, writable } from "../store";
import { type AgentState, type Compaction, emptyState, type Item, type ToolItem } from "./state";

export class Board {
  private readonly store = writable<AgentState>(emptyState());
  readonly state: Readable<AgentState> = this.store;

  constructor(
    private readonly newId: () => string,
    /** Stores items in the conversation's history. */
    private readonly recordItems: (items: Item[]) => void,
  ) {}

  get(): AgentState {
    return this.store.get();
  }

  set(state: AgentState): void {
    this.store.set(state);
  }

  update(change: (state: AgentState) => AgentState): void {
    this.store.update(change);
  }

  patch(change: Partial<AgentState>): void {
    this.store.update((state) => ({ ...state, ...change }));
  }

  addItem(item: Item): void {
    this.store.update((state) => ({ ...state, items: [...state.items, item] }));
  }

  updateItem(id: string, change: (item: Item) => Item): void {
    this.store.update((state) => ({
      ...state,
      items: state.items.map((item) => (item.id === id ? change(item) : item)),
    }));
  }

  updateCard(id: string, change: Partial<ToolItem>): void {
    this.updateItem(id, (item) => (item.kind === "tool" ? { ...item, ...change } : item));
  }

  removeItems(ids: Set<string>): void {
    if (ids.size === 0) return;
    this.store.update((state) => ({ ...state, items: state.items.filter((item) => !ids.has(item.id)) }));
  }

  /** Says something in the conversation; the history keeps it with it. */
  notice(text: string, detail?: string, compacted?: Compaction): void {
    const item: Item = { kind: "notice", id: this.newId(), text, ...(detail === undefined ? {} : { detail }), ...(compacted ? { compacted } : {}) };
    this.addItem(item);
    this.recordItems([item]);
  }
}
