// The search index's progress while it is built, gone once it is ready.
import { render, screen } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";
import type { IndexStatus } from "../lib/types";

const { ipc, next } = vi.hoisted(() => {
  const next: { statuses: IndexStatus[] } = { statuses: [] };
  const ipc = { searchIndexStatus: vi.fn(async () => next.statuses.shift() ?? { state: "ready", files: 0, ms: 0 }) };
  return { ipc, next };
});
vi.mock("../lib/ipc", () => ({ ipc }));

import IndexProgress from "./IndexProgress.svelte";

describe("IndexProgress", () => {
  it("counts the files read while building, then goes away", async () => {
    next.statuses = [
      { state: "building", listed: 1200, indexed: 300 },
      { state: "building", listed: 261000, indexed: 5000 },
      { state: "ready", files: 261000, ms: 9000 },
    ];
    render(IndexProgress, { props: { pollMs: 150 } });
    await vi.waitFor(() => expect(screen.getByTestId("index-progress").textContent).toContain("300 of 1,200 files"), { interval: 10 });
    await vi.waitFor(() => expect(screen.getByTestId("index-progress").textContent).toContain("5,000 of 261,000 files"), { interval: 10 });
    await vi.waitFor(() => expect(screen.queryByTestId("index-progress")).toBeNull());
    expect(ipc.searchIndexStatus).toHaveBeenCalledTimes(3);
  });

  it("says when the index could not be built", async () => {
    next.statuses = [{ state: "failed", message: "disk full" }];
    render(IndexProgress, { props: { pollMs: 5 } });
    await vi.waitFor(() => expect(screen.getByTestId("index-progress").textContent).toContain("unavailable"));
    expect(screen.getByTestId("index-progress").getAttribute("title")).toBe("disk full");
  });
});
