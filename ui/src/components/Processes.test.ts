// The Processes panel: background commands with their live output and Stop.
import { fireEvent, render, screen } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";
import type { CommandOutput } from "../lib/types";

vi.mock("../lib/ipc", () => import("../test/ipcMock").then((m) => m.ipcModule()));
import { ipc as client } from "../lib/ipc";
import { answer } from "../test/ipcMock";

const runs = { output: "", running: true, stopped: false, ports: [] as CommandOutput["ports"] };
const info = (output: string, next: number): CommandOutput => ({
  run_id: "bg-1",
  command: "npm",
  args: ["run", "dev"],
  output,
  next_byte: next,
  first_kept_byte: 0,
  running: runs.running,
  stopped: runs.stopped,
  elapsed_ms: 185_000,
  ports: runs.running ? runs.ports : [],
});
const ipc = answer(client, {
  listProcesses: async () => [info("", runs.output.length)],
  processOutput: async (_id: string, since: number) => info(runs.output.slice(since), runs.output.length),
  stopProcess: async () => {
    runs.running = false;
    runs.stopped = true;
    return info("", runs.output.length);
  },
});

import Processes from "./Processes.svelte";

describe("Processes", () => {
  it("shows a command's output as it grows, escapes dropped, and stops it", async () => {
    runs.output = "ready on :5173\n";
    render(Processes, { props: { pollMs: 10 } });
    await vi.waitFor(() => expect(screen.getByTestId("process-output").textContent).toBe("ready on :5173\n"));
    expect(screen.getByTestId("process-status").textContent).toBe("running");
    expect(screen.getByTestId("process-uptime").textContent).toBe("3 min 5 s");
    expect(screen.queryByTestId("process-ports")).toBeNull();
    // The ports it listens on, and where this computer reaches them.
    runs.ports = [{ port: 5173, reach_at: 5173 }, { port: 8080, reach_at: 41000 }, { port: 9229 }];
    await vi.waitFor(() => expect(screen.getAllByTestId("process-port")).toHaveLength(3));
    expect(screen.getAllByTestId("process-port").map((p) => p.textContent?.trim())).toEqual([
      "127.0.0.1:5173",
      "127.0.0.1:41000 → :8080",
      ":9229 (inside its sandbox only)",
    ]);
    runs.output += "\u001b[32mGET /\u001b[0m 200\n";
    await vi.waitFor(() => expect(screen.getByTestId("process-output").textContent).toBe("ready on :5173\nGET / 200\n"));
    // Asked from where it left off, not from the start.
    expect(ipc.processOutput).toHaveBeenCalledWith("bg-1", "ready on :5173\n".length);
    await fireEvent.click(screen.getByTestId("process-stop"));
    expect(ipc.stopProcess).toHaveBeenCalledWith("bg-1");
    await vi.waitFor(() => expect(screen.getByTestId("process-status").textContent).toBe("stopped"));
    expect(screen.queryByTestId("process-stop")).toBeNull();
    expect(screen.queryByTestId("process-ports")).toBeNull();
  });
});
