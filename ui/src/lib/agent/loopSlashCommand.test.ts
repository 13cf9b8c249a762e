// A custom command typed in the box: the model is sent its file's body with
// the arguments put in, the window shows what was typed, and the file is
// read through read_file like any file of the project.
import { describe, expect, it } from "vitest";
import { fakeIpc, say } from "../../test/fakeIpc";
import { NO_INSTRUCTIONS } from "./instructions";
import { AgentLoop } from "./loop";

const FIX_BUG = "---\ndescription: Fix a bug from the tracker\nargument-hint: [number] [priority]\n---\nFix bug #$1 (priority $2) and add a test that fails without the fix.\n";

function setup() {
  const fake = fakeIpc([say("Done.")]);
  fake.ipc.callTool.mockImplementation(async (name, input) => {
    if (name === "read_file" && input.path === ".claude/commands/tracker/fix-bug.md") return { path: input.path, content: FIX_BUG, truncated: false };
    throw { code: "not_found", message: `${String(input.path)} does not exist` };
  });
  const loop = new AgentLoop(fake.ipc, { projectRoot: "/p/app", newId: fake.newId, scheduleFrame: (run) => run(), instructions: NO_INSTRUCTIONS });
  return { ...fake, loop };
}

const sentText = (request: unknown): string => JSON.stringify(request);

describe("a slash command", () => {
  it("sends the command's body with the arguments in, and shows what was typed", async () => {
    const { loop, ipc, requests } = setup();
    await loop.send("/tracker:fix-bug 123 high");
    expect(ipc.callTool).toHaveBeenCalledWith("read_file", { path: ".claude/commands/tracker/fix-bug.md" });
    expect(sentText(requests[0])).toContain("Fix bug #123 (priority high) and add a test that fails without the fix.");
    expect(sentText(requests[0])).not.toContain("/tracker:fix-bug");
    expect(loop.state.get().items.find((item) => item.kind === "user")).toMatchObject({ text: "/tracker:fix-bug 123 high" });
  });

  it("that the project does not have is sent as typed", async () => {
    const { loop, requests } = setup();
    await loop.send("/nothing here");
    expect(sentText(requests[0])).toContain("/nothing here");
  });

  it("is not looked for in a message that is not one", async () => {
    const { loop, ipc } = setup();
    await loop.send("fix bug 123");
    expect(ipc.callTool).not.toHaveBeenCalled();
  });
});
