import { describe, expect, it } from "vitest";
import { listOf, splitFrontMatter } from "./frontMatter";
import { parseAgent } from "./agentFiles";
import { parseCommand } from "./slashCommands";
import { skillsOf } from "./skills";

describe("front matter", () => {
  it("reads keys, quoted values and lists, and keeps the body after it", () => {
    const { values, body, opened } = splitFrontMatter("\uFEFF---\nname: 'reviewer'\ndescription: \"Reviews code\"\ntools:\n  - Read\n- Grep\nmodel:   haiku\n---\n\nThe body.\n");
    expect(opened).toBe(true);
    expect(values.get("name")).toBe("reviewer");
    expect(values.get("description")).toBe("Reviews code");
    expect(values.get("tools")).toEqual(["Read", "Grep"]);
    expect(values.get("model")).toBe("haiku");
    expect(body).toBe("The body.\n");
  });

  it("leaves a file without front matter whole, and says when one is not closed", () => {
    expect(splitFrontMatter("Find slow loops in this code.\n")).toEqual({ values: new Map(), body: "Find slow loops in this code.\n", opened: false });
    const open = splitFrontMatter("---\ndescription: never closed\nbody");
    expect(open.problem).toBe("the front matter has no closing ---");
    expect(open.body).toBe("---\ndescription: never closed\nbody");
  });

  it("splits a list on commas outside parentheses", () => {
    expect(listOf("[Read, 'Bash(git add:*, git status:*)']")).toEqual(["Read", "Bash(git add:*, git status:*)"]);
    expect(listOf("Read, Grep")).toEqual(["Read", "Grep"]);
    expect(listOf(["Read", ""])).toEqual(["Read"]);
  });

  it("reads the same file the same way as a command, a subagent and a skill", () => {
    const text = "---\nname: reviewer\ndescription: 'Reviews: the diff'\ntools: Read, Grep\n---\nReview the change.\n";
    expect(parseCommand("reviewer.md", "project", ".claude/commands/reviewer.md", text)?.description).toBe("Reviews: the diff");
    const agent = parseAgent(".claude/agents/reviewer.md", text, [], { Read: "read_file", Grep: "search_files" });
    expect(agent?.description).toBe("Reviews: the diff");
    expect(agent?.tools).toEqual(["read_file", "search_files"]);
    expect(agent?.prompt).toBe("Review the change.");
    const [skill] = skillsOf({ skills: [{ source: "project", folder: "review", path: ".claude/skills/review/SKILL.md", text, files: [] }] });
    expect(skill.name).toBe("reviewer");
    expect(skill.description).toBe("Reviews: the diff");
  });
});
