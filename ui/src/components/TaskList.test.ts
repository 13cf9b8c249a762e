// The task list: each task's state, branch, size and where it runs; New
// task offers a container only when Settings name one, and says which.
import { fireEvent, render, screen } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";
import type { TaskRow } from "../lib/tasks";
import TaskList from "./TaskList.svelte";

const row = (name: string, place: string | null): TaskRow => ({
  name,
  branch: `corral/${name}`,
  path: `/data/worktrees/app/${name}`,
  status: "running",
  size: { files: 2, added: 3, removed: 1 },
  last: "Working on it",
  place,
  usage: { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0, unpriced: 0 },
});

function show(container: string | null) {
  const onStart = vi.fn();
  render(TaskList, {
    props: { rows: [row("here", null), row("boxed", "podman corral-boxed-1")], current: null, error: null, asking: true, onAsk: () => {}, onStart, onOpen: () => {}, container },
  });
  return onStart;
}

describe("the task list", () => {
  it("shows each task's state, size and where it runs", () => {
    show(null);
    const rows = screen.getAllByTestId("task-row");
    expect(rows.map((r) => r.dataset.status)).toEqual(["running", "running"]);
    expect(screen.getAllByTestId("task-size")[0].textContent).toBe("2 files, +3 −1");
    expect(screen.getAllByTestId("task-place").map((p) => p.textContent)).toEqual(["in podman corral-boxed-1"]);
  });

  it("shows what a task's model requests used and cost, once it used any", () => {
    const used = { input_tokens: 45_000, output_tokens: 2_100, cache_read_tokens: 30_000, cache_write_tokens: 0, cost_usd: 0.12, unpriced: 0 };
    render(TaskList, {
      props: { rows: [{ ...row("spent", null), usage: used }, row("fresh", null), { ...row("local?", null), usage: { ...used, cost_usd: 0, unpriced: 3 } }], current: null, error: null, asking: false, onAsk: () => {}, onStart: () => {}, onOpen: () => {}, container: null },
    });
    const shown = screen.getAllByTestId("task-usage");
    expect(shown.map((s) => s.textContent)).toEqual(["45.0k in, 2.1k out · $0.120", "45.0k in, 2.1k out · cost unknown"]);
    expect(shown[0].getAttribute("title")).toContain("30.0k cache read");
  });

  it("offers a container only when Settings name one, and starts the task there", async () => {
    let onStart = show(null);
    expect(screen.queryByTestId("new-task-place")).toBeNull();
    await fireEvent.input(screen.getByTestId("new-task-prompt"), { target: { value: "fix it" } });
    await fireEvent.click(screen.getByTestId("new-task-start"));
    expect(onStart).toHaveBeenCalledWith("fix it", "", "here");
    document.body.innerHTML = "";

    onStart = show("podman corral-task:1");
    const place = screen.getByTestId("new-task-place") as HTMLSelectElement;
    expect(place.textContent).toContain("podman corral-task:1");
    await fireEvent.change(place, { target: { value: "container" } });
    await fireEvent.input(screen.getByTestId("new-task-prompt"), { target: { value: "build it" } });
    await fireEvent.click(screen.getByTestId("new-task-start"));
    expect(onStart).toHaveBeenCalledWith("build it", "", "container");
  });
});
