// Settings has one Save, for the provider, the programs and the MCP servers;
// it and the status line stay below the scrolling fields; an MCP server's
// tools are named, and a tick marks one read-only.
import { fireEvent, render, screen } from "@testing-library/svelte";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { McpServerStatus, McpSettings, Settings, ShellConfig } from "../lib/types";

vi.mock("../lib/ipc", () => import("../test/ipcMock").then((m) => m.ipcModule()));
import { ipc as client } from "../lib/ipc";
import { answer } from "../test/ipcMock";

const held: { shell: ShellConfig; mcp: McpSettings | null; status: McpServerStatus[] } = {
  shell: { builtin: ["git", "npm"], global_programs: [], project_programs: [], rules: [] },
  mcp: null,
  status: [],
};
const ipc = answer(client, {
  getSettings: vi.fn(),
  saveSettings: vi.fn(),
  testConnection: vi.fn(),
  modelInfo: vi.fn(async () => ({})),
  detectLocalServers: vi.fn(async () => []),
  projectInfo: vi.fn(async () => ({ root: "/p", name: "p" })),
  shellConfig: vi.fn(async () => held.shell),
  savePrograms: vi.fn(async (global: string[], project: string[] | null) => {
    held.shell = { ...held.shell, global_programs: global, project_programs: project ?? [] };
    return held.shell;
  }),
  removeRule: vi.fn(),
  mcpSettings: vi.fn(async () => ({ servers: held.mcp?.servers ?? [], secrets_set: [] })),
  mcpStatus: vi.fn(async () => held.status),
  saveMcpSettings: vi.fn(async (settings: McpSettings) => {
    held.mcp = settings;
    return held.status;
  }),
  restartMcpServer: vi.fn(),
});

import SettingsView from "./Settings.svelte";

const saved: Settings = { provider: "openai", base_url: "http://127.0.0.1:8080/v1", model: "qwen", max_tokens: 4096, mode: "ask", notifications: true, has_api_key: false };
const time = { name: "time", command: "uvx", args: ["mcp-server-time"], env: [], network: true, in_project: false, trusted: false, read_only_tools: [] };

beforeEach(() => {
  vi.clearAllMocks();
  held.shell = { builtin: ["git", "npm"], global_programs: [], project_programs: [], rules: [] };
  held.mcp = { servers: [time], secrets: {} };
  held.status = [{ name: "time", state: "running", tools: ["get_current_time", "convert_time"], stderr: "" }];
  ipc.getSettings.mockResolvedValue(saved);
  ipc.saveSettings.mockImplementation(async (input: Record<string, unknown>) => ({ ...saved, ...input, has_api_key: false }));
  ipc.testConnection.mockResolvedValue({ ok: true, model: "qwen" });
});

async function shown(props: { onClose?: () => void; onSaved?: () => void } = {}): Promise<void> {
  render(SettingsView, { props: { onClose: () => {}, ...props } });
  await vi.waitFor(() => expect((screen.getByTestId("settings-model") as HTMLInputElement).value).toBe("qwen"));
  await screen.findByTestId("shell-global-programs");
  await screen.findByTestId("mcp-tools");
}

const status = (): string => screen.getByTestId("settings-status").textContent ?? "";

describe("Settings' one Save", () => {
  it("is the only save button, and saves the programs and the servers with the provider", async () => {
    await shown();
    const saves = screen.getAllByRole("button").filter((b) => /save/i.test(b.textContent ?? ""));
    expect(saves).toEqual([screen.getByTestId("settings-save")]);

    await fireEvent.input(screen.getByTestId("shell-project-programs"), { target: { value: "python3 pytest" } });
    await fireEvent.input(screen.getByTestId("mcp-timeout"), { target: { value: "30" } });
    await fireEvent.click(screen.getByTestId("settings-save"));
    await vi.waitFor(() => expect(status()).toBe("Saved, with the programs and the MCP servers (restarted)."));
    expect(ipc.saveSettings).toHaveBeenCalledTimes(1);
    expect(ipc.savePrograms).toHaveBeenCalledWith([], ["python3", "pytest"]);
    expect(held.mcp?.servers).toEqual([{ ...time, timeout_secs: 30 }]);
  });

  it("leaves unchanged programs and servers alone: saving the servers would restart them", async () => {
    await shown();
    await fireEvent.click(screen.getByTestId("settings-save"));
    await vi.waitFor(() => expect(status()).toBe("Saved."));
    expect(ipc.savePrograms).not.toHaveBeenCalled();
    expect(ipc.saveMcpSettings).not.toHaveBeenCalled();
  });

  it("applies on Save, never on Close: the window takes the new settings when they are saved", async () => {
    const onSaved = vi.fn();
    const onClose = vi.fn();
    await shown({ onSaved, onClose });
    await fireEvent.input(screen.getByTestId("settings-model"), { target: { value: "other" } });
    await fireEvent.click(screen.getByTestId("settings-close"));
    expect(onClose).toHaveBeenCalledTimes(1);
    expect(onSaved).not.toHaveBeenCalled();
    await fireEvent.click(screen.getByTestId("settings-save"));
    await vi.waitFor(() => expect(onSaved).toHaveBeenCalledTimes(1));
    expect(ipc.saveSettings.mock.invocationCallOrder[0]).toBeLessThan(onSaved.mock.invocationCallOrder[0]);
  });

  it("says why when a part fails", async () => {
    ipc.savePrograms.mockRejectedValueOnce({ code: "invalid_input", message: "`a/b` is not a program name", hint: "Name a program.", retryable: false, details: {} });
    await shown();
    await fireEvent.input(screen.getByTestId("shell-global-programs"), { target: { value: "a/b" } });
    await fireEvent.click(screen.getByTestId("settings-save"));
    await vi.waitFor(() => expect(screen.getByTestId("error-code").textContent).toBe("invalid_input"));
    expect(screen.getByTestId("settings-status-line").textContent).toContain("a/b is not a program name");
  });
});

describe("Settings' layout", () => {
  it("keeps Save, Test connection and the status line out of the scrolling fields, in a line of fixed height", async () => {
    await shown();
    const body = screen.getByTestId("settings-body");
    const footer = screen.getByTestId("settings-footer");
    for (const id of ["settings-save", "settings-test", "settings-close", "settings-status-line"]) {
      expect(footer.contains(screen.getByTestId(id))).toBe(true);
      expect(body.contains(screen.getByTestId(id))).toBe(false);
    }
    for (const id of ["settings-model", "shell-settings", "mcp-settings"]) expect(body.contains(screen.getByTestId(id))).toBe(true);
    await fireEvent.click(screen.getByTestId("settings-test"));
    await vi.waitFor(() => expect(status()).toContain("Connected: qwen answered."));
    expect(footer.contains(screen.getByTestId("settings-status"))).toBe(true);
  });
});

describe("an MCP server's tools", () => {
  it("are named, and a tick makes one read-only by its own name", async () => {
    await shown();
    expect(screen.getByTestId("mcp-tool-count").textContent).toContain("2 tools");
    const tools = screen.getAllByTestId("mcp-tool") as HTMLInputElement[];
    expect(tools.map((t) => t.dataset.tool)).toEqual(["get_current_time", "convert_time"]);
    expect(screen.getByTestId("mcp-tools").textContent).toContain("get_current_time");
    await fireEvent.click(tools[0]);
    expect((screen.getByTestId("mcp-read-only") as HTMLInputElement).value).toBe("get_current_time");
    await fireEvent.input(screen.getByTestId("mcp-read-only"), { target: { value: "get_current_time convert_time" } });
    expect(tools.map((t) => t.checked)).toEqual([true, true]);
    await fireEvent.click(tools[1]);
    await fireEvent.click(screen.getByTestId("settings-save"));
    await vi.waitFor(() => expect(ipc.saveMcpSettings).toHaveBeenCalled());
    expect(held.mcp?.servers[0].read_only_tools).toEqual(["get_current_time"]);
  });

  it("the help says where a server starts: a folder of its own unless ticked", async () => {
    await shown();
    const help = screen.getByTestId("mcp-settings").querySelector("p")?.textContent ?? "";
    expect(help).toContain("in a folder of its own");
    expect(help).not.toMatch(/starts when a project opens, in the project folder/);
  });
});
