// Settings' MCP servers: saved with their variables' values (never shown
// back), each server's state with its tools, or why it failed with its
// stderr and Restart.
import { fireEvent, render, screen } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";
import type { McpServerStatus, McpSettings, McpSettingsView } from "../lib/types";

vi.mock("../lib/ipc", () => import("../test/ipcMock").then((m) => m.ipcModule()));
import { ipc as client } from "../lib/ipc";
import { answer } from "../test/ipcMock";

const saved: { settings: McpSettings | null; view: McpSettingsView; status: McpServerStatus[] } = {
  settings: null,
  view: { servers: [], secrets_set: [] },
  status: [],
};
const ipc = answer(client, {
  mcpSettings: vi.fn(async () => saved.view),
  mcpStatus: vi.fn(async () => saved.status),
  saveMcpSettings: vi.fn(async (settings: McpSettings) => {
    saved.settings = settings;
    saved.view = {
      servers: settings.servers,
      secrets_set: Object.entries(settings.secrets).flatMap(([server, vars]) => Object.keys(vars ?? {}).map((v) => `${server}/${v}`)),
    };
    saved.status = [{ name: "github", state: "failed", tools: [], problems: ["it did not start an MCP session: connection closed"], stderr: "Error: GITHUB_TOKEN is wrong\n" }];
    return saved.status;
  }),
  restartMcpServer: vi.fn(async (name: string) => {
    saved.status = [{ name, state: "running", tools: ["search", "get_issue"], stderr: "" }];
    return saved.status;
  }),
});

import McpServers from "./McpServers.svelte";

describe("McpServers", () => {
  it("adds a server with a secret, shows it failed with its stderr, and restarts it", async () => {
    const { component } = render(McpServers, { props: { pollMs: 10_000 } });
    await fireEvent.click(await screen.findByTestId("mcp-add"));
    await fireEvent.input(screen.getByTestId("mcp-name"), { target: { value: "github" } });
    await fireEvent.input(screen.getByTestId("mcp-command"), { target: { value: "npx" } });
    await fireEvent.input(screen.getByTestId("mcp-args"), { target: { value: "-y\n@modelcontextprotocol/server-github\n" } });
    await fireEvent.input(screen.getByTestId("mcp-env"), { target: { value: "GITHUB_TOKEN" } });
    await fireEvent.input(await screen.findByTestId("mcp-secret"), { target: { value: "ghp_secret" } });
    await fireEvent.click(screen.getByTestId("mcp-network"));
    await fireEvent.input(screen.getByTestId("mcp-read-only"), { target: { value: "search, get_issue" } });
    await fireEvent.input(screen.getByTestId("mcp-timeout"), { target: { value: "30" } });
    expect(await component.save()).toBe(true);

    await vi.waitFor(() => expect(ipc.saveMcpSettings).toHaveBeenCalled());
    expect(saved.settings).toEqual({
      servers: [
        {
          name: "github",
          command: "npx",
          args: ["-y", "@modelcontextprotocol/server-github"],
          env: ["GITHUB_TOKEN"],
          network: true,
          in_project: false,
          trusted: false,
          read_only_tools: ["search", "get_issue"],
          timeout_secs: 30,
        },
      ],
      secrets: { github: { GITHUB_TOKEN: "ghp_secret" } },
    });
    // Failed: why, and its stderr; the secret is not shown back.
    await vi.waitFor(() => expect(screen.getByTestId("mcp-state").textContent).toBe("failed"));
    expect(screen.getByTestId("mcp-problems").textContent).toContain("did not start an MCP session");
    expect(screen.getByTestId("mcp-stderr").textContent).toContain("GITHUB_TOKEN is wrong");
    const secret = screen.getByTestId("mcp-secret") as HTMLInputElement;
    expect(secret.value).toBe("");
    expect(secret.placeholder).toBe("saved (type to replace)");

    await fireEvent.click(screen.getByTestId("mcp-restart"));
    expect(ipc.restartMcpServer).toHaveBeenCalledWith("github");
    await vi.waitFor(() => expect(screen.getByTestId("mcp-state").textContent).toBe("running"));
    expect(screen.getByTestId("mcp-tool-count").textContent).toBe("2 tools, read-only ticked:");
    expect((screen.getAllByTestId("mcp-tool") as HTMLInputElement[]).map((t) => [t.dataset.tool, t.checked])).toEqual([
      ["search", true],
      ["get_issue", true],
    ]);
  });

  it("a server at a URL is saved with its URL and no command", async () => {
    saved.view = { servers: [], secrets_set: [] };
    saved.status = [];
    const { component } = render(McpServers, { props: { pollMs: 10_000 } });
    await fireEvent.click(await screen.findByTestId("mcp-add"));
    await fireEvent.input(screen.getByTestId("mcp-name"), { target: { value: "remote" } });
    await fireEvent.input(screen.getByTestId("mcp-command"), { target: { value: "left-over" } });
    await fireEvent.input(screen.getByTestId("mcp-url"), { target: { value: " https://example.org/mcp " } });
    await component.save();
    await vi.waitFor(() => expect(saved.settings?.servers[0]).toMatchObject({ name: "remote", command: "", url: "https://example.org/mcp" }));
  });

  it("a value left empty keeps the saved one and a removed server is saved away", async () => {
    saved.view = {
      servers: [
        { name: "a", command: "a-server", args: [], env: ["TOKEN"], network: false, in_project: false, trusted: true, read_only_tools: [] },
        { name: "b", command: "b-server", args: [], env: [], network: false, in_project: true, trusted: false, read_only_tools: [] },
      ],
      secrets_set: ["a/TOKEN"],
    };
    saved.status = [];
    const { component } = render(McpServers, { props: { pollMs: 10_000 } });
    const removes = await screen.findAllByTestId("mcp-remove");
    await fireEvent.click(removes[1]);
    await component.save();
    await vi.waitFor(() => expect(saved.settings?.servers.map((s) => s.name)).toEqual(["a"]));
    expect(saved.settings?.secrets).toEqual({});
    expect(saved.settings?.servers[0].trusted).toBe(true);
  });
});
