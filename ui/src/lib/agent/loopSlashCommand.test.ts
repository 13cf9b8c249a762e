// A custom command typed in the box: the model is sent its file's body with
// the arguments put in, the window shows what was typed, and the file is
// the one Rust lists (the project's before the user's of the same name).
import { describe, expect, it } from "vitest";
import { fakeIpc, say } from "../../test/fakeIpc";
import type { CommandFile } from "../types";
import { NO_INSTRUCTIONS } from "./instructions";
import { AgentLoop } from "./loop";

const FIX_BUG = "---\ndescription: Fix a bug from the tracker\nargument-hint: [number] [priority]\n---\nFix bug #$1 (priority $2) and add a test that fails without the fix.\n";

const file = (source: CommandFile["source"], relative: string, text: string): CommandFile => ({ source, relative, path: `${source}/${relative}`, text });

function setup(commands: CommandFile[] = [file("project", "tracker/fix-bug.md", FIX_BUG)]) {
  const fake = fakeIpc([say("Done.")]);
  fake.ipc.customization.mockResolvedValue({ commands, skills: [], problems: [] });
  const loop = new AgentLoop(fake.ipc, { projectRoot: "/p/app", newId: fake.newId, scheduleFrame: (run) => run(), instructions: NO_INSTRUCTIONS });
  return { ...fake, loop };
}

const sentText = (request: unknown): string => JSON.stringify(request);

describe("a slash command", () => {
  it("sends the command's body with the arguments in, and shows what was typed", async () => {
    const { loop, requests } = setup();
    await loop.send("/tracker:fix-bug 123 high");
    expect(sentText(requests[0])).toContain("Fix bug #123 (priority high) and add a test that fails without the fix.");
    expect(sentText(requests[0])).not.toContain("/tracker:fix-bug");
    expect(loop.state.get().items.find((item) => item.kind === "user")).toMatchObject({ text: "/tracker:fix-bug 123 high" });
  });

  it("of the user's and of Codex's prompts is found too; the project's wins a name both have", async () => {
    const commands = [file("project", "review.md", "The project's review of $ARGUMENTS."), file("user", "review.md", "My own review."), file("user", "tidy.md", "Tidy $1."), file("codex", "draft.md", "Draft $ARGUMENTS.")];
    const run = async (text: string) => {
      const { loop, requests } = setup(commands);
      await loop.send(text);
      return sentText(requests[0]);
    };
    expect(await run("/review src")).toContain("The project's review of src.");
    expect(await run("/tidy lib")).toContain("Tidy lib.");
    expect(await run("/prompts:draft a plan")).toContain("Draft a plan.");
  });

  it("that no one has is sent as typed, and so is one when the listing fails", async () => {
    const { loop, requests } = setup();
    await loop.send("/nothing here");
    expect(sentText(requests[0])).toContain("/nothing here");
    const failing = setup();
    failing.ipc.customization.mockRejectedValue({ code: "no_project_open", message: "no project" });
    await failing.loop.send("/tracker:fix-bug 1 low");
    expect(sentText(failing.requests[0])).toContain("/tracker:fix-bug 1 low");
  });

  it("is not looked for in a message that is not one", async () => {
    const { loop, ipc } = setup();
    await loop.send("fix bug 123");
    expect(ipc.callTool).not.toHaveBeenCalled();
    // Only the skills' listing, once for the conversation; no command is looked up.
    expect(ipc.customization).toHaveBeenCalledTimes(1);
  });
});
