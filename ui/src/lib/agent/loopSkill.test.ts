// A skill loaded on demand in the loop: the first request names the skill
// and its description but not its body; the model calls load_skill, and
// the next request carries the body, read then.
import { describe, expect, it } from "vitest";
import { callTools, fakeIpc, say, use } from "../../test/fakeIpc";
import { NO_INSTRUCTIONS } from "./instructions";
import { AgentLoop } from "./loop";

const SKILL = "---\nname: release-notes\ndescription: Write release notes from the commits since the last tag.\n---\nGroup the commits as features, fixes and other.\n";

describe("a skill", () => {
  it("is described at first and its body is sent only once the model loads it", async () => {
    const load = use("load_skill", { name: "release-notes" });
    const { ipc, requests, newId } = fakeIpc([callTools(load), say("Done.")]);
    ipc.customization.mockResolvedValue({ commands: [], skills: [{ source: "project", folder: "release", path: ".claude/skills/release/SKILL.md", text: SKILL, files: [] }], problems: [] });
    ipc.skillFile.mockResolvedValue({ path: ".claude/skills/release/SKILL.md", content: SKILL });
    const loop = new AgentLoop(ipc, { projectRoot: "/p/app", newId, scheduleFrame: (run) => run(), instructions: NO_INSTRUCTIONS });
    await loop.send("Write the release notes.");
    const [first, second] = requests.map((r) => JSON.stringify(r));
    expect(first).toContain("release-notes: Write release notes from the commits since the last tag.");
    expect(first).not.toContain("Group the commits");
    expect(requests[0].tools.map((t) => t.name)).toContain("load_skill");
    expect(second).toContain("Group the commits as features, fixes and other.");
    expect(ipc.skillFile).toHaveBeenCalledWith("project", "release", undefined);
    expect(ipc.callTool).not.toHaveBeenCalled();
    expect(loop.state.get().items.find((item) => item.kind === "tool")).toMatchObject({ name: "load_skill", status: "done" });
  });
});
