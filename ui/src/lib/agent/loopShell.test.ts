import { describe, expect, it, vi } from "vitest";
import { callTools, fakeIpc, say, TICKET, use } from "../../test/fakeIpc";
import { AgentLoop } from "./loop";
import type { ToolItem } from "./state";
import { NO_INSTRUCTIONS } from "./instructions";

function setup(turns: Parameters<typeof fakeIpc>[0]) {
  const fake = fakeIpc(turns);
  const loop = new AgentLoop(fake.ipc, { projectRoot: "/p/app", newId: fake.newId, scheduleFrame: (run) => run(), instructions: NO_INSTRUCTIONS });
  const cards = () => loop.state.get().items.filter((i): i is ToolItem => i.kind === "tool");
  return { ...fake, loop, cards };
}

describe("AgentLoop: the shell's grants", () => {
  it("an install that asks for the network is approved with it, and the card says so", async () => {
    const sh = use("exec_shell", { command: "npm", args: ["ci"] });
    const t = setup([callTools(sh), say("installed")]);
    t.ipc.checkCall.mockResolvedValue({ ticket: TICKET, decision: "ask", reason: "the command fetches from the network", network: true });
    const sent = t.loop.send("install");
    await vi.waitFor(() => expect(t.cards()[0]?.status).toBe("waiting"));
    expect(t.cards()[0].network).toBe(true);
    t.loop.decide(t.cards()[0].id, "once");
    await sent;
    expect(t.ipc.execShell).toHaveBeenCalledWith(sh.input, { ticket: TICKET, approval: { scope: "once", network: true } }, expect.any(String), expect.any(Function), expect.anything());
  });

  it("any command can be approved once with the network; other answers carry none", async () => {
    const sh = use("exec_shell", { command: "python3", args: ["fetch.py"] });
    const pytest = use("exec_shell", { command: "pytest", args: ["-q"] });
    const t = setup([callTools(sh, pytest), say("done")]);
    t.ipc.checkCall.mockResolvedValue({ ticket: TICKET, decision: "ask", reason: "commands need approval" });
    const sent = t.loop.send("fetch");
    await vi.waitFor(() => expect(t.cards()[0]?.status).toBe("waiting"));
    t.loop.decide(t.cards()[0].id, "network");
    await vi.waitFor(() => expect(t.cards()[1]?.status).toBe("waiting"));
    t.loop.decide(t.cards()[1].id, { rule: "pytest -q" });
    await sent;
    const consents = t.ipc.execShell.mock.calls.map((c) => c[1]);
    expect(consents).toEqual([
      { ticket: TICKET, approval: { scope: "once", network: true } },
      { ticket: TICKET, approval: { scope: "always", rule: "pytest -q" } },
    ]);
  });

  it("a call a saved rule let through says which rule", async () => {
    const sh = use("exec_shell", { command: "npm", args: ["test"] });
    const t = setup([callTools(sh), say("ok")]);
    t.ipc.checkCall.mockResolvedValue({ ticket: TICKET, decision: "allow", rule: "npm test" });
    await t.loop.send("test");
    expect(t.cards()[0].rule).toBe("npm test");
    expect(t.ipc.execShell.mock.calls[0][1]).toEqual({ ticket: TICKET });
  });
});
