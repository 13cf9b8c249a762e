import { describe, expect, it, vi } from "vitest";
import { callTools, fakeIpc, say, SPECS, type Turn, use } from "../../test/fakeIpc";
import type { LlmRequest } from "../types";
import { parseAgent, projectAgents } from "./agentFiles";
import { NO_INSTRUCTIONS } from "./instructions";
import { AgentLoop } from "./loop";
import type { ToolItem } from "./state";

const KNOWN = SPECS.map((s) => s.name);
/** Claude's tool names as Rust sends them with the customization (corral-session's `claude_tools`). */
const CLAUDE = { Bash: "exec_shell", Edit: "edit_file", Glob: "glob", Grep: "search_files", Read: "read_file", WebFetch: "web_fetch", Write: "write_file" };

const REVIEWER = `---
name: code-reviewer
description: Reviews changed code for bugs and style.
tools: Read, Grep, Glob, Edit, NotebookEdit
model: sonnet
---
You are a careful reviewer. Fix what is plainly wrong.
`;

describe("an agent file", () => {
  it("gives its name, description, instructions, and its tools in Corral's names", () => {
    const agent = parseAgent(".claude/agents/reviewer.md", REVIEWER, KNOWN, CLAUDE);
    expect(agent).toEqual({
      name: "code-reviewer",
      description: "Reviews changed code for bugs and style.",
      prompt: "You are a careful reviewer. Fix what is plainly wrong.",
      tools: ["read_file", "search_files", "glob", "edit_file"],
      model: "sonnet",
      source: ".claude/agents/reviewer.md",
      unknown: ["NotebookEdit"],
    });
  });

  it("takes a list of tools, Corral's names, its file's name when it names none, and every tool when it lists none", () => {
    const listed = parseAgent("a/lister.md", "---\ndescription: Lists.\ntools:\n  - list_directory\n  - Bash\nmodel: inherit\n---\nList.", KNOWN, CLAUDE);
    expect(listed).toMatchObject({ name: "lister", tools: ["list_directory", "exec_shell"], unknown: [] });
    expect(listed).not.toHaveProperty("model");
    expect(parseAgent("a/all.md", "---\nname: all\ndescription: Does it all.\n---\nGo.", KNOWN)?.tools).toBe("all");
  });

  it("reads Claude's tool names only by the table Rust sends", () => {
    const text = "---\nname: r\ndescription: Reads.\ntools: Read, toString, constructor\n---\nRead.";
    expect(parseAgent("a/r.md", text, KNOWN, { Read: "read_file" })).toMatchObject({ tools: ["read_file"], unknown: ["toString", "constructor"] });
    expect(parseAgent("a/r.md", text, KNOWN, {})).toMatchObject({ tools: [], unknown: ["Read", "toString", "constructor"] });
  });

  it("is not an agent without a front matter, a description or instructions, or with a bad name", () => {
    expect(parseAgent("a/x.md", "Just text.", KNOWN)).toBeNull();
    expect(parseAgent("a/x.md", "---\nname: x\n---\nBody.", KNOWN)).toBeNull();
    expect(parseAgent("a/x.md", "---\nname: x\ndescription: D.\n---\n", KNOWN)).toBeNull();
    expect(parseAgent("a/x.md", "---\nname: two words\ndescription: D.\n---\nBody.", KNOWN)).toBeNull();
    expect(parseAgent("a/x.md", "---\nname: x\ndescription: D.\nBody.", KNOWN)).toBeNull();
  });
});

/** A fake whose project holds `.claude/agents` with these files. */
function withAgents(turns: Turn[], files: Record<string, string>) {
  const fake = fakeIpc(turns);
  fake.ipc.customization.mockResolvedValue({ commands: [], skills: [], problems: [], claude_tools: CLAUDE });
  const read = fake.ipc.callTool.getMockImplementation()!;
  fake.ipc.callTool.mockImplementation(async (name, input, ...rest) => {
    if (name === "list_directory" && input.path === ".claude/agents") {
      return { path: ".claude/agents", entries: Object.keys(files).map((path) => ({ path, kind: "file" })), truncated: false };
    }
    if (name === "read_file" && typeof input.path === "string" && input.path in files) return { path: input.path, content: files[input.path] };
    return read(name, input, ...rest);
  });
  const loop = new AgentLoop(fake.ipc, { projectRoot: "/p/app", newId: fake.newId, scheduleFrame: (run) => run(), instructions: NO_INSTRUCTIONS, agents: projectAgents });
  const cards = () => loop.state.get().items.filter((i): i is ToolItem => i.kind === "tool");
  return { ...fake, loop, cards };
}

describe("the project's subagents", () => {
  it("are offered beside the built-ins, get their own instructions and tools, and say what they asked for and did not get", async () => {
    const task = use("task", { subagent_type: "code-reviewer", prompt: "Review src/lib.rs." });
    const t = withAgents([callTools(task), say("Looks right."), say("Reviewed.")], { ".claude/agents/reviewer.md": REVIEWER });
    await t.loop.send("review it");
    const offered = t.requests[0].tools.find((tool) => tool.name === "task");
    expect(offered?.description).toContain("- code-reviewer: Reviews changed code for bugs and style.");
    expect(offered?.description).toContain("- explore: ");
    const sub = t.requests[1];
    expect(sub.system).toContain("You are a careful reviewer.");
    expect(sub.tools.map((tool) => tool.name).sort()).toEqual(["edit_file", "glob", "read_file", "search_files"]);
    const notes = t.cards()[0].subagent!.items.flatMap((i) => (i.kind === "notice" ? [i.text] : []));
    expect(notes).toEqual([
      "This subagent asks for the model `sonnet`; it runs on the conversation's model (a subagent's own model is not supported yet).",
      "Tools its file names that Corral does not have, left out: NotebookEdit.",
    ]);
  });

  it("run one at a time when they may write, even called together", async () => {
    const files = { ".claude/agents/fixer.md": "---\nname: fixer\ndescription: Fixes.\ntools: Read, Edit\n---\nFix it." };
    const first = use("task", { subagent_type: "fixer", prompt: "Fix ONE." });
    const second = use("task", { subagent_type: "fixer", prompt: "Fix TWO." });
    let requests: LlmRequest[] = [];
    // Were they run at once, the second's request would come while the first's reply waits.
    let askedMeanwhile = -1;
    const slow: Turn = async (emit, ctx) => {
      await new Promise((r) => setTimeout(r, 50));
      askedMeanwhile = requests.length - 2;
      await say("fixed one")(emit, ctx);
    };
    const t = withAgents([callTools(first, second), slow, say("fixed two"), say("Both fixed.")], files);
    requests = t.requests;
    await t.loop.send("fix both");
    expect(askedMeanwhile).toBe(0);
    expect(JSON.stringify(requests[1].messages)).toContain("Fix ONE.");
    expect(JSON.stringify(requests[2].messages)).toContain("Fix TWO.");
    expect(t.cards().map((c) => (c.result as { answer: string }).answer)).toEqual(["fixed one", "fixed two"]);
  });

  it("replace a built-in of the same name", async () => {
    const files = { ".claude/agents/explore.md": "---\nname: explore\ndescription: Our own explorer.\n---\nExplore our way." };
    const t = withAgents([say("hi")], files);
    await t.loop.send("hi");
    const offered = t.requests[0].tools.find((tool) => tool.name === "task")!;
    expect(offered.description).toContain("- explore: Our own explorer.");
    expect(offered.description.match(/- explore: /g)).toHaveLength(1);
    await vi.waitFor(() => expect(t.loop.state.get().busy).toBe(false));
  });
});
