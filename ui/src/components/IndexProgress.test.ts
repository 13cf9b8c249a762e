// The search index's progress while it is built, gone once it is ready.
import { render, screen } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";
import type { IndexStatus } from "../lib/types";

vi.mock("../lib/ipc", () => import("../test/ipcMock").then((m) => m.ipcModule()));
import { ipc as client } from "../lib/ipc";
import { mocked } from "../test/ipcMock";

const ipc = mocked(client);
const next: { statuses: IndexStatus[] } = { statuses: [] };
ipc.searchIndexStatus.mockImplementation(async () => next.statuses.shift() ?? { state: "ready", files: 0, ms: 0 });

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
