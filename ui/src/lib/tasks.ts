// A project's tasks in the window. A task is a conversation with a place: a
// git worktree of the project on a branch of its own, made and kept by Rust
// (task_new, task_list). Each task here has a loop of its own whose IPC
// names the task (taskIpc), so its tools, commands, approvals and history
// are its worktree's, and several run side by side. At most `atOnce` run
// at a time (the `tasks_at_once` setting): a task started over it waits
// in line and says so. Switching tasks never stops one.
import { AgentLoop } from "./agent/loop";
import type { AgentState, Usage } from "./agent/state";
import type { AgentFinder } from "./agent/agentFiles";
import { toWireError } from "./errors";
import type { Ipc } from "./ipc";
import { writable, type Readable } from "./store";
import type { DiffSize, TaskEntry, TaskInfo, TaskPlace, WireError } from "./types";

/** Where a task stands, as the list shows it. */
export type TaskStatus = "waiting for a slot" | "running" | "waiting for approval" | "failed" | "done" | "new";

/** One task as the list shows it. */
export type TaskRow = {
  name: string;
  branch: string;
  path: string;
  status: TaskStatus;
  size: DiffSize;
  /** The last thing the agent said (its first line), or the task's prompt. */
  last: string;
  /** Where its session runs when not here (its engine and container). */
  place: string | null;
  /** What its conversation's model requests used and cost (the history's totals and its runs since). */
  usage: Usage;
};

/** A task's state from its loop's: approval first, then a run, its end. */
export function statusOf(state: AgentState, queued: boolean): TaskStatus {
  if (queued) return "waiting for a slot";
  if (state.items.some((i) => i.kind === "tool" && i.status === "waiting")) return "waiting for approval";
  if (state.busy) return "running";
  if (state.error) return "failed";
  return state.items.some((i) => i.kind === "assistant") ? "done" : "new";
}

/** The first line of the agent's last words, else of the user's last message. */
export function lastLine(state: AgentState): string {
  for (let at = state.items.length - 1; at >= 0; at--) {
    const item = state.items[at];
    if ((item.kind === "assistant" || item.kind === "user") && item.text.trim() !== "") return item.text.trim().split("\n")[0];
  }
  return "";
}

/** What the board needs of the window. */
export type TaskDeps = {
  ipc: Ipc;
  /** The loop's IPC for one task (every command names it). */
  ipcFor: (task: string) => Ipc;
  agents?: AgentFinder;
  /** A task's loop was made (the window follows its notices). */
  onLoop?: (name: string, loop: AgentLoop) => void;
};

type Task = { info: TaskInfo; place: string | null; loop: AgentLoop; ipc: Ipc; queued: string | null; launching: boolean; unsubscribe: () => void };

export class TaskBoard {
  private readonly tasks = new Map<string, Task>();
  private readonly rowsStore = writable<TaskRow[]>([]);
  private readonly errorStore = writable<WireError | null>(null);
  /** How many may run at once (Rust's `at_once`). */
  atOnce = 1;

  constructor(private readonly deps: TaskDeps) {}

  /** The tasks as the list shows them, oldest first. */
  get rows(): Readable<TaskRow[]> {
    return this.rowsStore;
  }

  /** The last thing that failed (making, listing or landing a task). */
  get error(): Readable<WireError | null> {
    return this.errorStore;
  }

  /** The task `name`'s loop and IPC. */
  get(name: string): { loop: AgentLoop; ipc: Ipc } | undefined {
    return this.tasks.get(name);
  }

  /**
   * Lists the project's tasks (those an earlier run or a crash left too) and
   * opens each one's newest conversation, to go on with.
   */
  async load(): Promise<void> {
    try {
      const listed = await this.deps.ipc.taskList();
      this.atOnce = listed.at_once;
      for (const entry of listed.tasks) await this.adopt(entry);
      this.show();
    } catch (e) {
      this.errorStore.set(toWireError(e));
    }
  }

  /** Starts a task named `name` (a short one from `prompt` when empty) that is sent `prompt`, its session at `place`; it waits if `atOnce` run. */
  async start(prompt: string, name = "", place: TaskPlace = "here"): Promise<string | null> {
    try {
      const made = await this.deps.ipc.taskNew(name.trim() || nameFrom(prompt), place);
      const task = await this.adopt({ ...made, conversation: null, place: null });
      task.queued = prompt;
      this.show();
      this.pump();
      return made.name;
    } catch (e) {
      this.errorStore.set(toWireError(e));
      return null;
    }
  }

  /** Sizes and states again (after a run, a merge). */
  async refresh(): Promise<void> {
    try {
      const listed = await this.deps.ipc.taskList();
      this.atOnce = listed.at_once;
      for (const entry of listed.tasks) {
        const task = this.tasks.get(entry.name);
        if (task) {
          task.info = entry;
          task.place = entry.place;
        }
        else await this.adopt(entry);
      }
      for (const name of [...this.tasks.keys()]) if (!listed.tasks.some((t) => t.name === name)) this.drop(name);
      this.show();
    } catch (e) {
      this.errorStore.set(toWireError(e));
    }
  }

  /** The task is gone (discarded): its loop stops. */
  drop(name: string): void {
    const task = this.tasks.get(name);
    if (!task) return;
    task.loop.stop();
    task.unsubscribe();
    this.tasks.delete(name);
    this.show();
  }

  /** Stops every task's run (the project closes). */
  stopAll(): void {
    for (const task of this.tasks.values()) {
      task.queued = null;
      task.loop.stop();
      task.unsubscribe();
    }
    this.tasks.clear();
    this.show();
  }

  private async adopt(entry: TaskEntry): Promise<Task> {
    const known = this.tasks.get(entry.name);
    if (known) return known;
    const ipc = this.deps.ipcFor(entry.name);
    const loop = new AgentLoop(ipc, { projectRoot: entry.path, agents: this.deps.agents });
    if (entry.conversation) {
      try {
        loop.load(await ipc.openConversation(entry.conversation, { elideOver: 4096, last: 60 }));
      } catch (e) {
        this.errorStore.set(toWireError(e));
      }
    }
    const task: Task = { info: entry, place: entry.place, loop, ipc, queued: null, launching: false, unsubscribe: () => undefined };
    let busy = false;
    task.unsubscribe = loop.state.subscribe((state) => {
      this.show();
      // A run ended: the next waiting one may start, and the size changed.
      if (busy && !state.busy) {
        this.pump();
        void this.refresh();
      }
      busy = state.busy;
    });
    this.tasks.set(entry.name, task);
    this.deps.onLoop?.(entry.name, loop);
    return task;
  }

  /** Starts waiting tasks while fewer than `atOnce` run. */
  private pump(): void {
    // A task sent its prompt counts from then, before its loop says busy.
    const running = (): number => [...this.tasks.values()].filter((t) => t.launching || t.loop.state.get().busy).length;
    for (const task of this.tasks.values()) {
      if (task.queued === null) continue;
      if (running() >= this.atOnce) break;
      const prompt = task.queued;
      task.queued = null;
      task.launching = true;
      void task.loop.send(prompt).finally(() => {
        task.launching = false;
        this.pump();
      });
    }
    this.show();
  }

  private show(): void {
    this.rowsStore.set(
      [...this.tasks.values()].map((t) => {
        const state = t.loop.state.get();
        return {
          name: t.info.name,
          branch: t.info.branch,
          path: t.info.path,
          status: statusOf(state, t.queued !== null),
          size: t.info.size,
          last: t.queued ?? lastLine(state),
          place: t.place,
          usage: state.usage,
        };
      }),
    );
  }
}

/** A task's name from its prompt: its first words. */
export function nameFrom(prompt: string): string {
  return prompt.trim().split(/\s+/).slice(0, 5).join(" ") || "task";
}
