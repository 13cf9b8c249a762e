// What the user allowed in a conversation: the grant given from the
// approval covers only what it showed, the call it let through says so on
// its card, the list shows it with Revoke, and a new conversation starts
// with none (the old key's grants are ended). The fake IPC holds grants as
// Rust would, by conversation key.
import { fireEvent, render, screen } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";
import { callTools, fakeIpc, say, TICKET, type Turn, use } from "../test/fakeIpc";
import { AgentLoop } from "../lib/agent/loop";
import { NO_INSTRUCTIONS } from "../lib/agent/instructions";
import type { Grant } from "../lib/types";
import Chat from "./Chat.svelte";

function setup(turns: Turn[]) {
  const fake = fakeIpc(turns);
  const loop = new AgentLoop(fake.ipc, { projectRoot: "/p/app", newId: fake.newId, scheduleFrame: (run) => run(), instructions: NO_INSTRUCTIONS });
  // As Rust decides: ask, offering the very argv, unless a grant of the
  // conversation holds that argv (the only grant these tests give).
  fake.ipc.checkCall.mockImplementation(async (_tool, input, conversation) => {
    const argv: Grant = { kind: "command", command: String(input.command), args: (input.args as string[]) ?? [], more: false };
    const held = fake.grants.get(conversation ?? "") ?? [];
    const entry = held.find((e) => JSON.stringify(e.grant) === JSON.stringify(argv));
    return entry ? { ticket: TICKET, decision: "allow", grant: entry } : { ticket: TICKET, decision: "ask", reason: "commands need approval", exact_grant: argv };
  });
  render(Chat, { props: { loop } });
  return { ...fake, loop };
}

async function click(testid: string): Promise<void> {
  const button = screen.getByTestId(testid) as HTMLButtonElement;
  await vi.waitFor(() => expect(button.disabled).toBe(false), { timeout: 2000 });
  await fireEvent.mouseDown(button);
  await fireEvent.click(button, { detail: 1 });
}

const cards = () => screen.getAllByTestId("tool-card");

describe("grants in a conversation", () => {
  it("are listed, say on the card what let a call run, revoke, and end with the conversation", async () => {
    const first = use("exec_shell", { command: "node", args: ["-e", "console.log(1)"] });
    const other = use("exec_shell", { command: "node", args: ["-e", "console.log(2)"] });
    const again = use("exec_shell", { command: "node", args: ["-e", "console.log(1)"] });
    const t = setup([callTools(first), callTools(other), callTools(again), say("done")]);
    expect(screen.queryByTestId("conversation-grants")).toBeNull();
    void t.loop.send("go");

    await vi.waitFor(() => expect(screen.getByTestId("approval")).toBeTruthy());
    await click("approve-conversation");
    await click("grant-confirm");
    // Other code for node asks again: the grant was the argv shown.
    await vi.waitFor(() => expect(cards()[1]?.dataset.status).toBe("waiting"));
    const exact: Grant = { kind: "command", command: "node", args: ["-e", "console.log(1)"], more: false };
    expect(t.grants.get(t.loop.grantsKey)).toEqual([{ id: "grant-1", grant: exact }]);
    await click("deny");
    // The same argv runs unasked and its card says by what.
    await vi.waitFor(() => expect(cards()[2]?.dataset.status).toBe("done"));
    expect(cards()[2].querySelector("[data-testid=tool-grant]")?.textContent).toBe(
      "Allowed without asking by what you allowed in this conversation: the command node -e console.log(1).",
    );
    expect(cards()[0].querySelector("[data-testid=tool-grant]")).toBeNull();

    const list = screen.getByTestId("conversation-grants");
    expect(list.querySelector("summary")?.textContent).toBe("Allowed in this conversation (1)");
    expect(screen.getAllByTestId("conversation-grant").map((li) => li.textContent)).toEqual(["the command node -e console.log(1) Revoke"]);
    await fireEvent.click(screen.getByTestId("revoke-grant"));
    await vi.waitFor(() => expect(screen.queryByTestId("conversation-grants")).toBeNull());
    expect(t.ipc.revokeGrant).toHaveBeenCalledWith(t.loop.grantsKey, "grant-1");
    expect(t.grants.get(t.loop.grantsKey)).toEqual([]);
  }, 15_000); // three approvals, each armed after 0.5 s: over 5 s on a loaded machine

  it("start over in a new conversation: the old key's grants end, the new key has none", async () => {
    const call = use("exec_shell", { command: "node", args: ["-e", "console.log(1)"] });
    const t = setup([callTools(call), say("done")]);
    void t.loop.send("go");
    await vi.waitFor(() => expect(screen.getByTestId("approval")).toBeTruthy());
    await click("approve-conversation");
    await click("grant-confirm");
    await vi.waitFor(() => expect(screen.getByTestId("conversation-grants")).toBeTruthy());
    await vi.waitFor(() => expect(t.loop.state.get().busy).toBe(false));
    const old = t.loop.grantsKey;
    await t.loop.clear();
    expect(t.loop.grantsKey).not.toBe(old);
    expect(t.ipc.endConversation).toHaveBeenCalledWith(old);
    expect(t.grants.has(old)).toBe(false);
    await vi.waitFor(() => expect(screen.queryByTestId("conversation-grants")).toBeNull());
    expect(t.loop.state.get().grants).toEqual([]);
  });
});
