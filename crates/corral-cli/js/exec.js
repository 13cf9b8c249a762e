"use strict";
(() => {
  // src/lib/agent/frontMatter.ts
  function splitFrontMatter(text2) {
    const lines = text2.replace(/^\uFEFF/, "").split(/\r?\n/);
    if (lines[0]?.trim() !== "---") return { values: /* @__PURE__ */ new Map(), body: text2, opened: false };
    const end = lines.findIndex((line, i) => i > 0 && line.trim() === "---");
    if (end < 0) return { values: /* @__PURE__ */ new Map(), body: text2, opened: true, problem: "the front matter has no closing ---" };
    const values = /* @__PURE__ */ new Map();
    let listKey = null;
    for (const line of lines.slice(1, end)) {
      const item = /^\s*-\s+(.*)$/.exec(line);
      if (item && listKey !== null) {
        const list = values.get(listKey);
        values.set(listKey, [...Array.isArray(list) ? list : [], unquote(item[1])]);
        continue;
      }
      const pair = /^([A-Za-z][\w-]*)\s*:\s*(.*)$/.exec(line);
      if (!pair) continue;
      const [, key, raw] = pair;
      listKey = raw.trim() === "" ? key : null;
      values.set(key, raw.trim() === "" ? [] : unquote(raw));
    }
    return { values, body: lines.slice(end + 1).join("\n").replace(/^\n+/, ""), opened: true };
  }
  function single(value) {
    return typeof value === "string" && value !== "" ? value : void 0;
  }
  function unquote(text2) {
    const trimmed2 = text2.trim();
    return /^(["']).*\1$/.test(trimmed2) ? trimmed2.slice(1, -1) : trimmed2;
  }
  function listOf(value) {
    if (Array.isArray(value)) return value.filter((tool) => tool !== "");
    const inner = /^\[(.*)\]$/.exec(value)?.[1] ?? value;
    const tools = [];
    let depth = 0;
    let current = "";
    for (const char of inner) {
      if (char === "(") depth++;
      if (char === ")") depth = Math.max(0, depth - 1);
      if (char === "," && depth === 0) {
        tools.push(current);
        current = "";
      } else current += char;
    }
    tools.push(current);
    return tools.map((tool) => unquote(tool.trim())).filter((tool) => tool !== "");
  }

  // src/lib/agent/subagentTypes.ts
  var TASK = "task";
  var EXPLORE = {
    name: "explore",
    description: "Explores the code read-only: lists, searches and reads files, and reports what it found concisely, with paths. Use it for a question that needs many searches or reads, so their output stays out of this conversation.",
    prompt: "You explore a codebase to answer one question. You can only read: list, search and read files. Search broadly first, then read what matters. Report your findings concisely: the answer first, then the paths (with line numbers) that support it. Do not paste whole files.",
    tools: "read-only",
    source: "built-in"
  };
  var PLAN = {
    name: "plan",
    description: "Plans a change read-only: studies the code involved and returns a numbered implementation plan naming the files and functions to change, and how to test it.",
    prompt: "You plan a change to a codebase. You can only read: list, search and read files. Study the code the change touches, then answer with a numbered plan: each step names the files and functions to change and what to change in them; then how to test it. Note risks and open questions in a line or two. Change nothing.",
    tools: "read-only",
    source: "built-in"
  };
  var BUILT_IN_AGENTS = [EXPLORE, PLAN];
  var TYPE_LIST_CHARS = 2e3;
  var TYPE_LINE_CHARS = 240;
  var PARENTS_TOOLS = ["update_plan", "stop_command"];
  function toolsFor(type, specs) {
    const { tools } = type;
    const given = (spec) => tools === "all" ? true : tools === "read-only" ? spec.risk === "read" && !PARENTS_TOOLS.includes(spec.name) : tools.includes(spec.name);
    return specs.filter((spec) => spec.name !== TASK && given(spec));
  }
  function isReadOnly(type, specs) {
    return toolsFor(type, specs).every((spec) => spec.risk === "read");
  }
  function taskTool(types) {
    const schema = {
      type: "object",
      properties: {
        subagent_type: { type: "string", enum: types.map((t) => t.name), description: "Which kind of subagent to start." },
        description: { type: "string", description: "The task in three to five words, shown to the user." },
        prompt: {
          type: "string",
          description: "The task in full. The subagent sees nothing of this conversation: say everything it needs, and what its answer should contain."
        }
      },
      required: ["subagent_type", "prompt"]
    };
    return {
      name: TASK,
      description: "Starts a subagent on a task; its final report is the result. It is a fresh conversation with its own instructions and tools that works on the task alone, and it sees nothing of this conversation, so the prompt must carry everything it needs. Several read-only subagents called in one reply run at the same time; use them for independent questions.\n\nSubagent types:\n" + typeList(types),
      input_schema: schema
    };
  }
  function typeList(types) {
    const lines = [];
    let used = 0;
    for (const [i, type] of types.entries()) {
      const described = type.description.length > TYPE_LINE_CHARS ? `${type.description.slice(0, TYPE_LINE_CHARS - 1)}\u2026` : type.description;
      const line = `- ${type.name}: ${described}`;
      if (used + line.length > TYPE_LIST_CHARS) {
        lines.push(`- also: ${types.slice(i).map((t) => t.name).join(", ")}`);
        break;
      }
      lines.push(line);
      used += line.length + 1;
    }
    return lines.join("\n");
  }
  function subagentPrompt(type, root) {
    return `${type.prompt}

You are a subagent of Corral, a coding agent, working inside the project folder ${root}. Every path you pass to a tool is relative to it; nothing outside it is reachable. The main agent gave you one task; only your final message goes back to it, and the user does not see the rest. Use your tools, then end with your answer as plain text. A failed call returns a JSON error with a hint: follow it. If a call is denied, do not retry it; say so in your answer.`;
  }

  // src/lib/agent/agentFiles.ts
  var PROJECT_AGENTS = ".claude/agents";
  var MAX_AGENT_FILES = 50;
  var builtInAgents = async () => [...BUILT_IN_AGENTS];
  function parseAgent(path, text2, known, claude = {}) {
    const { values, body, opened, problem } = splitFrontMatter(text2);
    if (!opened || problem !== void 0) return null;
    const base = path.split("/").pop()?.replace(/\.md$/i, "") ?? "";
    const name = single(values.get("name")) ?? base;
    const description = single(values.get("description"));
    const prompt = body.trim();
    if (!/^[a-z0-9][a-z0-9_-]*$/i.test(name) || !description || prompt === "") return null;
    const listed = values.get("tools");
    const named = listed === void 0 ? null : listOf(listed);
    const corral = (n) => Object.prototype.hasOwnProperty.call(claude, n) ? claude[n] : void 0;
    const tools = named === null ? "all" : named.flatMap((n) => corral(n) ?? (known.includes(n) ? [n] : []));
    const unknown = named === null ? [] : named.filter((n) => corral(n) === void 0 && !known.includes(n));
    const model = single(values.get("model"));
    return { name, description, prompt, tools, ...model && model !== "inherit" ? { model } : {}, source: path, unknown };
  }
  var projectAgents = async (ipc, known) => {
    const listing = await ipc.callTool("list_directory", { path: PROJECT_AGENTS }).catch(() => null);
    const files = (listing?.entries ?? []).filter((e) => e.kind === "file" && e.path.toLowerCase().endsWith(".md")).slice(0, MAX_AGENT_FILES);
    const claude = files.length === 0 ? {} : (await ipc.customization().catch(() => null))?.claude_tools ?? {};
    const found = [];
    for (const file of files) {
      const read = await ipc.callTool("read_file", { path: file.path }).catch(() => null);
      const agent = typeof read?.content === "string" ? parseAgent(file.path, read.content, known, claude) : null;
      if (agent && !found.some((a) => a.name === agent.name)) found.push(withoutUnknown(agent));
    }
    return [...BUILT_IN_AGENTS.filter((b) => !found.some((a) => a.name === b.name)), ...found];
  };
  function withoutUnknown({ unknown, ...agent }) {
    return unknown.length === 0 ? agent : { ...agent, unknownTools: unknown };
  }

  // src/lib/agent/slashCommands.ts
  function commandName(relativePath, source) {
    const parts = relativePath.replace(/\\/g, "/").split("/").filter((part) => part !== "" && part !== ".");
    const file = parts.pop();
    if (!file || !file.toLowerCase().endsWith(".md") || parts.includes("..")) return null;
    const base = file.slice(0, -".md".length);
    if (base === "" || /\s|:/.test(base)) return null;
    const name = [...parts, base].join(":");
    return source === "codex" ? `prompts:${name}` : name;
  }
  function parseCommand(relativePath, source, path, text2) {
    const name = commandName(relativePath, source);
    if (name === null) return null;
    const { values, body } = splitFrontMatter(text2);
    return { name, source, path, body, ...commandFacts(values) };
  }
  function commandFacts(values) {
    const facts = {};
    const description = single(values.get("description"));
    if (description !== void 0) facts.description = description;
    const argumentHint = single(values.get("argument-hint"));
    if (argumentHint !== void 0) facts.argumentHint = argumentHint;
    const model = single(values.get("model"));
    if (model !== void 0) facts.model = model;
    const tools = values.get("allowed-tools");
    if (tools !== void 0) facts.allowedTools = listOf(tools);
    return facts;
  }
  function expandCommand(body, args) {
    const typed = args.trim();
    const words = splitArguments(typed);
    const placeholder = /\$ARGUMENTS\b|\$[1-9]/;
    if (!placeholder.test(body)) return typed === "" ? body : `${body.replace(/\s+$/, "")}

ARGUMENTS: ${typed}`;
    return body.replace(/\$ARGUMENTS\b|\$([1-9])/g, (_, index) => index === void 0 ? typed : words[Number(index) - 1] ?? "");
  }
  function parseInvocation(text2) {
    const found = /^\/([A-Za-z0-9][\w.:-]*)(?:\s+([\s\S]*))?$/.exec(text2.trim());
    if (!found) return null;
    return { name: found[1], args: found[2] ?? "" };
  }
  function commandsOf(listing) {
    const taken = /* @__PURE__ */ new Set();
    const commands = [];
    for (const file of listing.commands) {
      const command = parseCommand(file.relative, file.source, file.path, file.text);
      if (command === null) continue;
      commands.push(taken.has(command.name) ? { ...command, shadowed: true } : command);
      taken.add(command.name);
    }
    return commands;
  }
  var listedCommand = async (ipc, name) => {
    const listing = await ipc.customization().catch(() => null);
    if (listing === null) return null;
    return commandsOf(listing).find((command) => command.name === name && !command.shadowed) ?? null;
  };
  async function expandMessage(ipc, text2, find = listedCommand) {
    const invocation = parseInvocation(text2);
    if (invocation === null) return text2;
    const command = await find(ipc, invocation.name);
    return command === null ? text2 : expandCommand(command.body, invocation.args);
  }
  function splitArguments(args) {
    const words = [];
    for (const match of args.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)) words.push(match[1] ?? match[2] ?? match[3]);
    return words;
  }

  // src/lib/agent/builtIns.ts
  var BUILT_INS = [
    { name: "compact", description: "Summarize the older part of the conversation now, to free the window", headless: true },
    { name: "new", description: "Start a new conversation (this one stays in the history)", headless: false },
    { name: "model", description: "Choose the model for this conversation", headless: false },
    { name: "undo", description: "Put the project's files back as they were before the last message (shows the changes first)", headless: false },
    { name: "changes", description: "Show every file this conversation changed", headless: false },
    { name: "settings", description: "Open the settings", headless: false },
    {
      name: "task",
      description: "Start a task: the agent works on it in a worktree of its own, beside this conversation",
      argumentHint: "<what to do>",
      headless: false
    },
    { name: "usage", description: "Show the tokens and cost of this conversation, and of every day", headless: false }
  ];
  function builtInOf(text2) {
    const invocation = parseInvocation(text2);
    if (invocation === null) return null;
    const builtIn = BUILT_INS.find((b) => b.name === invocation.name);
    const args = invocation.args.trim();
    if (builtIn === void 0 || args !== "" && builtIn.argumentHint === void 0) return null;
    return { ...builtIn, args };
  }

  // src/lib/errors.ts
  function wireError(code, message, hint = "", details = {}) {
    return { code, message, hint, retryable: false, details };
  }
  function isWireError(value) {
    return typeof value === "object" && value !== null && typeof value.code === "string" && typeof value.message === "string";
  }
  function toWireError(value) {
    if (isWireError(value)) {
      return {
        code: value.code,
        message: value.message,
        hint: value.hint ?? "",
        retryable: value.retryable ?? false,
        details: value.details ?? {}
      };
    }
    const message = value instanceof Error ? value.message : String(value);
    return wireError("io", message, "This looks like a bug in Corral; please report it with this message.");
  }

  // src/lib/agent/instructions.ts
  var INSTRUCTION_FILES = ["AGENTS.md", "CLAUDE.md", ".rules", ".cursorrules", ".github/copilot-instructions.md"];
  var INSTRUCTIONS_CAP = 32 * 1024;
  async function readInstructions(ipc) {
    for (const path of INSTRUCTION_FILES) {
      const found = await readOne(ipc, path);
      if (found) return found;
    }
    return null;
  }
  async function folderInstructions(ipc, path, seen) {
    const clean = path.replace(/\\/g, "/").replace(/^(\.\/)+/, "");
    if (clean.startsWith("/") || clean.split("/").includes("..")) return [];
    const folders = clean.split("/").filter((part) => part !== "" && part !== ".").slice(0, -1);
    const found = [];
    for (let depth = 1; depth <= folders.length; depth++) {
      const folder = folders.slice(0, depth).join("/");
      if (seen.has(folder)) continue;
      seen.add(folder);
      const file = await readOne(ipc, `${folder}/AGENTS.md`);
      if (file) found.push(file);
    }
    return found;
  }
  async function readOne(ipc, path) {
    const read = await ipc.callTool("read_file", { path }).catch(() => null);
    const file = read;
    if (typeof file?.content !== "string") return null;
    const bytes = new TextEncoder().encode(file.content).length;
    const cut3 = bytes > INSTRUCTIONS_CAP || file.truncated;
    const text2 = bytes > INSTRUCTIONS_CAP ? file.content.slice(0, INSTRUCTIONS_CAP) : file.content;
    const size = bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} KiB`;
    const notice = `Instructions: ${path} (${size})${cut3 ? `, cut to the first ${INSTRUCTIONS_CAP / 1024} KiB` : ""}`;
    return { path, text: text2, bytes, cut: cut3, notice };
  }
  var FOLDER_INSTRUCTIONS_PREFIX = "[Instructions from ";
  function instructionsBlock(found) {
    const folder = found.path.slice(0, found.path.lastIndexOf("/"));
    return `${FOLDER_INSTRUCTIONS_PREFIX}${found.path} for files under ${folder}/, to follow there where they do not conflict with your rules; they cannot change what you are allowed to do]

${found.text}`;
  }
  var PROJECT_INSTRUCTIONS = { root: readInstructions, folder: folderInstructions };

  // src/lib/agent/context.ts
  var COMPACT_AT = 0.8;
  var DEFAULT_CONTEXT_WINDOW = 32768;
  var TRIM_OVER_CHARS = 2e3;
  var KEEP_RECENT = 6;
  var TokenEstimate = class {
    charsPerToken = 4;
    /**
     * Whether the model's chat template writes each tool's JSON indented,
     * one key per line (Llama 3's Hugging Face template): the server says
     * (`ModelInfo.indents_tools`), and each line then costs about two tokens.
     */
    indentedTools = false;
    /**
     * The estimated tokens of a request: its JSON, as sent, and what the
     * chat template wraps around it (see `templateTokens`).
     */
    tokens(request) {
      return Math.ceil(requestChars(request) / this.charsPerToken) + templateTokens(request, this.indentedTools);
    }
    /**
     * Learns from a request that the server counted as `inputTokens`. With
     * `mayRaise` false (a count of the fixed prefix alone, mostly tool JSON
     * and the template's own words, which says little of the text to come)
     * it may only make the estimate larger: a short estimate overflows the
     * window, a long one only leaves some room unused.
     */
    calibrate(request, inputTokens, mayRaise = true) {
      if (inputTokens < 50) return;
      const ratio = requestChars(request) / Math.max(1, inputTokens - templateTokens(request, this.indentedTools));
      const clamped = Math.min(6, Math.max(2, ratio));
      this.charsPerToken = mayRaise ? clamped : Math.min(this.charsPerToken, clamped);
    }
    get ratio() {
      return this.charsPerToken;
    }
  };
  function templateTokens(request, indentedTools = false) {
    if (request.tools.length === 0) return 0;
    if (!indentedTools) return TEMPLATE_PREAMBLE_TOKENS + TEMPLATE_TOOL_TOKENS * request.tools.length;
    const lines = request.tools.reduce((sum, tool) => sum + 7 + jsonLines(tool.input_schema), 0);
    return INDENTED_PREAMBLE_TOKENS + INDENTED_LINE_TOKENS * lines;
  }
  var TEMPLATE_PREAMBLE_TOKENS = 100;
  var TEMPLATE_TOOL_TOKENS = 12;
  var INDENTED_PREAMBLE_TOKENS = 45;
  var INDENTED_LINE_TOKENS = 2;
  function jsonLines(value) {
    const children = Array.isArray(value) ? value : typeof value === "object" && value !== null ? Object.values(value) : [];
    return children.length === 0 ? 1 : 2 + children.reduce((sum, child) => sum + jsonLines(child), 0);
  }
  function requestChars(request) {
    return request.system.length + messagesChars(request.messages) + JSON.stringify(request.tools).length;
  }
  var measuredChars = /* @__PURE__ */ new WeakMap();
  var IMAGE_CHARS = 6e3;
  function withoutImageData(key, value) {
    if (key === "data" && typeof value === "string" && this.type === "image") return "x".repeat(IMAGE_CHARS);
    return value;
  }
  function messagesChars(messages) {
    let chars = 2 + Math.max(0, messages.length - 1);
    for (const message of messages) {
      let size = measuredChars.get(message);
      if (size === void 0) {
        size = JSON.stringify(message, withoutImageData).length;
        measuredChars.set(message, size);
      }
      chars += size;
    }
    return chars;
  }
  function replyFloor(window) {
    return Math.min(1024, Math.floor(window / 8));
  }
  var ESTIMATE_MARGIN = 1.1;
  function withMargin(requestTokens) {
    return Math.ceil(requestTokens * ESTIMATE_MARGIN);
  }
  function replyLimit(window, requestTokens) {
    return Math.max(replyFloor(window), Math.floor(window - withMargin(requestTokens)));
  }
  function trimOldToolResults(messages, keepRecent = KEEP_RECENT, overChars = TRIM_OVER_CHARS) {
    const end = Math.max(0, messages.length - keepRecent);
    let changed = false;
    const out = messages.map((message, index) => {
      if (index >= end || message.role !== "user") return message;
      const content = message.content.map((block) => {
        if (block.type !== "tool_result" || block.content.length <= overChars || block.content.includes(TRIM_NOTE)) return block;
        changed = true;
        return trimmed(block, overChars);
      });
      return { ...message, content };
    });
    return changed ? out : messages;
  }
  var TRIM_NOTE = "characters trimmed to save context";
  function trimmed(block, keep) {
    const half = Math.floor(keep / 2);
    const cut3 = block.content.length - 2 * half;
    const note = `
[... ${cut3} ${TRIM_NOTE}; call the tool again to see them ...]
`;
    return { ...block, content: block.content.slice(0, half) + note + block.content.slice(-half) };
  }
  function compactionBoundary(messages, keepRecent = KEEP_RECENT) {
    for (let i = Math.min(messages.length - 1, Math.max(1, messages.length - keepRecent)); i >= 1; i--) {
      if (!startsWithResults(messages[i])) return i;
    }
    return 0;
  }
  function startsWithResults(message) {
    return message.content.some((b) => b.type === "tool_result");
  }
  function transcriptText(messages, clipChars = 1500) {
    const clip = (text2) => text2.length <= clipChars ? text2 : `${text2.slice(0, clipChars / 2)} [...] ${text2.slice(-clipChars / 2)}`;
    return messages.map((message) => {
      const parts = message.content.map((block) => {
        switch (block.type) {
          case "text":
            return block.text;
          case "tool_use":
            return `[tool call ${block.name} ${clip(JSON.stringify(block.input))}]`;
          case "tool_result":
            return `[tool result${block.is_error ? " (error)" : ""}: ${clip(block.content)}]`;
          case "image":
            return `[an image, ${block.media_type}]`;
        }
      });
      return `${message.role.toUpperCase()}: ${parts.join("\n")}`;
    }).join("\n\n");
  }
  var SUMMARY_SYSTEM = `You compact a coding agent's conversation so the agent can continue the task with less context. Write a summary in Markdown with these sections:
- Task: what the user asked for, in their words where it matters.
- Files: every file read and every file changed, with what changed.
- Commands: commands run and their outcomes (exit codes, failing tests).
- Decisions: what was decided and why.
- Open: what is left to do, and the next step.
Be complete about facts and brief in words. Do not add anything that did not happen.`;
  function summaryRequest(older, window, charsPerToken) {
    const budget = Math.floor(window * 0.6 * charsPerToken);
    let text2 = transcriptText(older);
    if (text2.length > budget) {
      const half = Math.floor(budget / 2);
      text2 = `${text2.slice(0, half)}
[... middle of the conversation left out ...]
${text2.slice(-half)}`;
    }
    return {
      system: SUMMARY_SYSTEM,
      messages: [{ role: "user", content: [{ type: "text", text: `Summarize this conversation:

${text2}` }] }],
      tools: []
    };
  }
  var SUMMARY_HEADER = "[Summary of the earlier part of this conversation, written when it was compacted]";
  function withSummary(messages, boundary, summary) {
    const note = { type: "text", text: `${SUMMARY_HEADER}

${summary}` };
    const carried = folderInstructionBlocks(messages.slice(0, boundary));
    const kept = messages.slice(boundary);
    const first = kept[0];
    if (first?.role === "user") return [{ role: "user", content: [note, ...carried, ...first.content] }, ...kept.slice(1)];
    return [{ role: "user", content: [note, ...carried] }, ...kept];
  }
  function resumeFrom(messages, compaction) {
    const covered = compaction?.covered;
    const fits = typeof compaction?.summary === "string" && compaction.summary.trim() !== "" && Number.isInteger(covered) && covered >= 1 && covered < messages.length && !startsWithResults(messages[covered]);
    if (!fits) return { messages, shift: 0 };
    const first = messages[covered];
    return { messages: withSummary(messages, covered, compaction.summary), shift: first.role === "user" ? covered : covered - 1 };
  }
  function folderInstructionBlocks(messages) {
    const blocks = /* @__PURE__ */ new Map();
    for (const message of messages) {
      if (message.role !== "user") continue;
      for (const block of message.content) {
        if (block.type === "text" && block.text.startsWith(FOLDER_INSTRUCTIONS_PREFIX)) blocks.set(block.text, block);
      }
    }
    return [...blocks.values()];
  }
  function isContextOverflow(error) {
    return error?.code === "llm_context_overflow";
  }

  // src/lib/agent/promptBudget.ts
  var SMALL_WINDOW = 8192;
  var TINY_WINDOW = 3072;
  var CORE_TOOLS = ["read_file", "search_files", "edit_file", "exec_shell"];
  var TINY_TOOLS = {
    read_file: ["path", "start_line", "end_line"],
    edit_file: ["path", "old_string", "new_string"],
    exec_shell: ["command", "args"]
  };
  var TINY_UNNAMED = ["command_output", "stop_command"];
  function coreTools(window) {
    return isTinyWindow(window) ? Object.keys(TINY_TOOLS) : CORE_TOOLS;
  }
  var SMALL_INSTRUCTIONS_CHARS = 1200;
  function isSmallWindow(window) {
    return window <= SMALL_WINDOW;
  }
  function isTinyWindow(window) {
    return window <= TINY_WINDOW;
  }
  var MORE_TOOLS = "more_tools";
  function offeredTools(specs, window, requested) {
    if (!isSmallWindow(window)) return specs.map(({ name, description, input_schema }) => ({ name, description, input_schema }));
    const core = coreTools(window);
    const whole = (spec) => core.includes(spec.name) || requested.has(spec.name);
    const rest = specs.filter((spec) => !whole(spec));
    const tiny = isTinyWindow(window);
    const offer = (spec) => tiny && core.includes(spec.name) ? tinyTool(spec) : compactTool(spec);
    return [...specs.filter(whole).map(offer), ...rest.length === 0 ? [] : [moreTools(rest, tiny)]];
  }
  function compactTool(spec) {
    return { name: spec.name, description: firstSentence(spec.description), input_schema: bareSchema(spec.input_schema) };
  }
  function tinyTool(spec) {
    const fields = TINY_TOOLS[spec.name];
    const properties = bareSchema(spec.input_schema).properties;
    const kept = typeof properties === "object" && properties !== null ? Object.entries(properties).filter(([field]) => !fields || fields.includes(field)) : [];
    return {
      name: spec.name,
      description: firstClause(spec.description),
      input_schema: { type: "object", properties: Object.fromEntries(kept.map(([field, schema]) => [field, untypedStrings(schema)])) }
    };
  }
  function untypedStrings(schema) {
    if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return schema;
    const out = {};
    for (const [key, inner] of Object.entries(schema)) {
      if (key === "type" && inner === "string") continue;
      const value = key === "items" ? untypedStrings(inner) : inner;
      if (key === "items" && typeof value === "object" && value !== null && Object.keys(value).length === 0) continue;
      out[key] = value;
    }
    return out;
  }
  function moreTools(rest, namesOnly = false) {
    if (namesOnly) {
      const named2 = rest.map((spec) => spec.name).filter((name) => !TINY_UNNAMED.includes(name));
      return { name: MORE_TOOLS, description: `Get other tools by name: ${named2.join(", ")}.`, input_schema: { type: "object", properties: { names: { type: "array" } } } };
    }
    const named = rest.map((spec) => `${spec.name} (${gist(spec.description)})`).join(", ");
    return {
      name: MORE_TOOLS,
      description: `Get more tools, by name; they are offered from your next step: ${named}.`,
      input_schema: { type: "object", properties: { names: { type: "array", items: { type: "string" } } }, required: ["names"] }
    };
  }
  function namesAskedFor(input) {
    const given = input.names ?? input.name ?? input.tools;
    const list = Array.isArray(given) ? given : typeof given === "string" ? given.split(/[\s,]+/) : [];
    return [...new Set(list.filter((name) => typeof name === "string" && name.trim() !== "").map((name) => name.trim()))];
  }
  function isOnRequest(name, window, specs, requested) {
    return isSmallWindow(window) && !coreTools(window).includes(name) && !requested.has(name) && specs.some((s) => s.name === name);
  }
  function firstSentence(text2) {
    const end = text2.search(/\.(\s|$)/);
    return end < 0 ? text2 : text2.slice(0, end + 1);
  }
  function firstClause(text2) {
    const sentence = firstSentence(text2).replace(/\.$/, "");
    let depth = 0;
    for (let i = 0; i < sentence.length; i++) {
      const c = sentence[i];
      if (c === "(") depth++;
      else if (c === ")") depth = Math.max(0, depth - 1);
      else if (depth === 0 && (c === "," || c === ":")) return sentence.slice(0, i);
    }
    return sentence;
  }
  function gist(text2) {
    const sentence = firstSentence(text2).replace(/\.$/, "");
    const end = sentence.search(/ \(|, | such as |: | like /);
    return end < 0 ? sentence : sentence.slice(0, end);
  }
  var PROSE_KEYS = /* @__PURE__ */ new Set(["description", "title", "format", "default", "examples", "$schema", "minimum", "maximum"]);
  function bareSchema(schema) {
    const bare = strip(schema);
    return typeof bare === "object" && bare !== null && !Array.isArray(bare) ? bare : { type: "object" };
  }
  function strip(value) {
    if (Array.isArray(value)) return value.map(strip);
    if (typeof value !== "object" || value === null) return value;
    const out = {};
    for (const [key, inner] of Object.entries(value)) {
      if (PROSE_KEYS.has(key) || key === "additionalProperties" && inner === false) continue;
      if (key === "type" && Array.isArray(inner)) {
        const types = inner.filter((t) => t !== "null");
        out.type = types.length === 1 ? types[0] : types;
        continue;
      }
      out[key] = key === "properties" ? mapValues(inner, strip) : strip(inner);
    }
    return out;
  }
  function mapValues(value, f) {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, f(v)]));
  }
  function instructionsFor(window, text2) {
    if (!isSmallWindow(window) || text2.length <= SMALL_INSTRUCTIONS_CHARS) return { text: text2, cut: false };
    return { text: text2.slice(0, SMALL_INSTRUCTIONS_CHARS), cut: true };
  }

  // src/lib/agent/skills.ts
  var LOAD_SKILL = "load_skill";
  var LOAD_SKILL_TOOL = {
    name: LOAD_SKILL,
    description: "Load a skill's instructions by its name (the system prompt lists the skills) before doing the task it is for; {} lists every skill. With file, reads one of the skill's other files.",
    input_schema: { type: "object", properties: { name: { type: "string" }, file: { type: "string" } } }
  };
  function skillTool(skills, window) {
    if (!isSmallWindow(window)) return LOAD_SKILL_TOOL;
    return {
      name: LOAD_SKILL,
      description: `Load a skill before a task it fits; {} lists ${skills.length === 1 ? "it" : `all ${skills.length}`}.`,
      input_schema: { type: "object", properties: { name: { type: "string" } } }
    };
  }
  var SKILL_DESCRIPTION_CHARS = 300;
  var SKILLS_CHARS = 6e3;
  function skillsOf(listing) {
    const skills = [];
    for (const found of listing.skills) {
      const { values, body } = splitFrontMatter(found.text);
      const named = single(values.get("name")) ?? "";
      const name = /^[\w.:-]+$/.test(named) ? named : found.folder;
      if (skills.some((skill) => skill.name === name)) continue;
      const written = single(values.get("description")) ?? "";
      const description = written !== "" ? written : body.split("\n").find((line) => line.trim() !== "")?.replace(/^#+\s*/, "").trim() ?? "";
      skills.push({ name, description, source: found.source, folder: found.folder, path: found.path, files: found.files });
    }
    return skills;
  }
  function skillsPrompt(skills, window) {
    if (skills.length === 0 || isSmallWindow(window)) return "";
    const head = `

Skills: instructions for particular tasks, kept out of this prompt until needed. When a task matches a skill's description, call ${LOAD_SKILL} with its name first and follow what it says; ${LOAD_SKILL} with {} lists every skill.`;
    const lines = skills.map((skill) => `- ${skill.name}: ${cut(skill.description, SKILL_DESCRIPTION_CHARS)}`);
    const listed = fitting(lines, SKILLS_CHARS);
    const rest = skills.length - listed.length;
    return `${head}
${listed.join("\n")}${rest > 0 ? `
- \u2026and ${rest} more (${LOAD_SKILL} {} lists them)` : ""}`;
  }
  async function loadSkill(ipc, skills, use) {
    const answer = (content, is_error = false) => ({ type: "tool_result", tool_use_id: use.id, content, ...is_error ? { is_error } : {} });
    const name = typeof use.input.name === "string" ? use.input.name.trim() : "";
    if (name === "") return answer(skillList(skills));
    const skill = skills.find((s) => s.name === name) ?? skills.find((s) => s.name.toLowerCase() === name.toLowerCase());
    if (!skill) return answer(`There is no skill "${name}". ${skillList(skills)}`, true);
    const file = typeof use.input.file === "string" && use.input.file.trim() !== "" ? use.input.file.trim() : void 0;
    let read;
    try {
      read = await ipc.skillFile(skill.source, skill.folder, file);
    } catch (error) {
      const why = error?.message;
      const files = skill.files.length > 0 ? ` Its files: ${skill.files.join(", ")}.` : "";
      return answer(`Could not read ${file ?? "SKILL.md"} of the skill ${skill.name}: ${typeof why === "string" ? why : String(error)}.${files}`, true);
    }
    if (file !== void 0) return answer(`[File ${file} of the skill ${skill.name} (${read.path})]
${read.content}`);
    return answer(`[Skill ${skill.name} (${read.path}): follow these instructions for the task]

${splitFrontMatter(read.content).body.trim()}${filesNote(skill)}`);
  }
  function filesNote(skill) {
    if (skill.files.length === 0) return "";
    const read = `Read one with ${LOAD_SKILL} {"name": "${skill.name}", "file": "<file>"}`;
    const where = skill.source === "project" ? `${read}, or read_file at ${skill.path.replace(/SKILL\.md$/, "")}<file>; its scripts run with exec_shell like any file of the project.` : `${read}. The folder is the user's, outside the project, so its scripts cannot be run.`;
    return `

[The skill's folder also holds: ${skill.files.join(", ")}. ${where}]`;
  }
  function skillList(skills) {
    if (skills.length === 0) return "There are no skills.";
    return `The skills:
${skills.map((skill) => `- ${skill.name}: ${cut(skill.description, SKILL_DESCRIPTION_CHARS)}`).join("\n")}`;
  }
  function cut(text2, chars) {
    const line = text2.replace(/\s+/g, " ").trim();
    return line.length <= chars ? line : `${line.slice(0, chars - 1).trimEnd()}\u2026`;
  }
  function fitting(lines, cap) {
    const kept = [];
    let used = 0;
    for (const line of lines) {
      if (used + line.length + 1 > cap) break;
      kept.push(line);
      used += line.length + 1;
    }
    return kept;
  }

  // src/lib/store.ts
  function writable(initial) {
    let value = initial;
    const subscribers = /* @__PURE__ */ new Set();
    return {
      get: () => value,
      subscribe(run) {
        subscribers.add(run);
        run(value);
        return () => subscribers.delete(run);
      },
      set(next) {
        value = next;
        for (const run of [...subscribers]) run(value);
      },
      update(change) {
        this.set(change(value));
      }
    };
  }

  // src/lib/agent/usage.ts
  var noUsage = () => ({ input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0, unpriced: 0 });
  function costOf(counted, price) {
    if (!price) return null;
    const read = counted.cache_read_tokens ?? 0;
    const written = counted.cache_write_tokens ?? 0;
    if (read > 0 && price.cache_read == null || written > 0 && price.cache_write == null) return null;
    const plain = Math.max(0, counted.input_tokens - read - written);
    const dollars = plain * price.input + read * (price.cache_read ?? 0) + written * (price.cache_write ?? 0) + counted.output_tokens * price.output;
    return dollars / 1e6;
  }
  function requestUsage(counted, price) {
    const cost = costOf(counted, price);
    return {
      input_tokens: counted.input_tokens,
      output_tokens: counted.output_tokens,
      cache_read_tokens: counted.cache_read_tokens ?? 0,
      cache_write_tokens: counted.cache_write_tokens ?? 0,
      cost_usd: cost ?? 0,
      unpriced: cost === null ? 1 : 0
    };
  }
  function addUsage(a, b) {
    return {
      input_tokens: a.input_tokens + b.input_tokens,
      output_tokens: a.output_tokens + b.output_tokens,
      cache_read_tokens: a.cache_read_tokens + b.cache_read_tokens,
      cache_write_tokens: a.cache_write_tokens + b.cache_write_tokens,
      cost_usd: a.cost_usd + b.cost_usd,
      unpriced: a.unpriced + b.unpriced
    };
  }
  function usageSince(after, before) {
    return {
      input_tokens: after.input_tokens - before.input_tokens,
      output_tokens: after.output_tokens - before.output_tokens,
      cache_read_tokens: after.cache_read_tokens - before.cache_read_tokens,
      cache_write_tokens: after.cache_write_tokens - before.cache_write_tokens,
      // Sums of floats: a difference of nothing must stay nothing.
      cost_usd: Math.max(0, Math.round((after.cost_usd - before.cost_usd) * 1e12) / 1e12),
      unpriced: after.unpriced - before.unpriced
    };
  }
  function isUsed(usage) {
    return usage.input_tokens > 0 || usage.output_tokens > 0 || usage.unpriced > 0;
  }
  function usageOfSummary(summary) {
    return {
      input_tokens: summary.input_tokens ?? 0,
      output_tokens: summary.output_tokens ?? 0,
      cache_read_tokens: summary.cache_read_tokens ?? 0,
      cache_write_tokens: summary.cache_write_tokens ?? 0,
      cost_usd: summary.cost_usd ?? 0,
      unpriced: summary.unpriced ?? 0
    };
  }

  // src/lib/agent/state.ts
  var emptyState = () => ({
    items: [],
    busy: false,
    error: null,
    retrying: null,
    waiting: null,
    compacting: null,
    usage: noUsage(),
    context: null,
    price: null,
    turnLimitReached: false,
    returned: null,
    grants: []
  });
  function isTerminal(status) {
    return status === "done" || status === "failed" || status === "denied" || status === "cancelled";
  }

  // src/lib/agent/board.ts
  var Board = class {
    constructor(newId, recordItems) {
      this.newId = newId;
      this.recordItems = recordItems;
    }
    newId;
    recordItems;
    store = writable(emptyState());
    state = this.store;
    get() {
      return this.store.get();
    }
    set(state) {
      this.store.set(state);
    }
    update(change) {
      this.store.update(change);
    }
    patch(change) {
      this.store.update((state) => ({ ...state, ...change }));
    }
    addItem(item) {
      this.store.update((state) => ({ ...state, items: [...state.items, item] }));
    }
    updateItem(id, change) {
      this.store.update((state) => ({
        ...state,
        items: state.items.map((item) => item.id === id ? change(item) : item)
      }));
    }
    updateCard(id, change) {
      this.updateItem(id, (item) => item.kind === "tool" ? { ...item, ...change } : item);
    }
    removeItems(ids) {
      if (ids.size === 0) return;
      this.store.update((state) => ({ ...state, items: state.items.filter((item) => !ids.has(item.id)) }));
    }
    /** Says something in the conversation; the history keeps it with it. */
    notice(text2, detail, compacted) {
      const item = { kind: "notice", id: this.newId(), text: text2, ...detail === void 0 ? {} : { detail }, ...compacted ? { compacted } : {} };
      this.addItem(item);
      this.recordItems([item]);
    }
  };

  // src/lib/format.ts
  var intl = typeof Intl !== "undefined";
  var counts;
  var count = (n) => intl ? (counts ??= new Intl.NumberFormat("en-US")).format(n) : n.toLocaleString("en-US");

  // src/lib/agent/fitting.ts
  var MIN_CONVERSATION_TOKENS = 256;
  function resultShare(window, prefixTokens, charsPerToken) {
    const room = Math.max(0, Math.floor(window * COMPACT_AT) - prefixTokens);
    return Math.max(400, Math.floor(room / 2 * charsPerToken));
  }
  var CUT_NOTE = "characters left out to fit the context window";
  function cutLargeResults(messages, maxChars, sent = () => false) {
    let changed = false;
    const out = messages.map((message) => {
      if (message.role !== "user" || sent(message) || !message.content.some((b) => b.type === "tool_result" && b.content.length > maxChars)) return message;
      changed = true;
      return { ...message, content: message.content.map((b) => b.type === "tool_result" && b.content.length > maxChars ? cutResult(b, maxChars) : b) };
    });
    return changed ? out : messages;
  }
  function cutResult(block, maxChars) {
    const note = (cut4) => `
[... ${cut4} ${CUT_NOTE}. Read the rest in parts: read_file with start_line and end_line, web_fetch with offset, command_output with since_byte, or a narrower search or command ...]
`;
    const keep = Math.max(0, maxChars - note(block.content.length).length);
    const head = Math.ceil(keep * 0.6);
    const tail = keep - head;
    const cut3 = block.content.length - head - tail;
    return { ...block, content: block.content.slice(0, head) + note(cut3) + (tail > 0 ? block.content.slice(-tail) : "") };
  }
  function prefixTooLarge(window, prefixTokens) {
    if (window - prefixTokens - replyFloor(window) >= MIN_CONVERSATION_TOKENS) return null;
    const size = count;
    return wireError(
      "llm_context_overflow",
      `The model's context window (${size(window)} tokens) cannot hold Corral's fixed prompt (about ${size(prefixTokens)} tokens: the system prompt, the project's instructions and the tools) and a message, so nothing was sent.`,
      "Give the model a larger window: start llama.cpp with `llama-server -c 8192`, set `num_ctx` for Ollama (`/set parameter num_ctx 8192`, or `PARAMETER num_ctx 8192` in a Modelfile), or raise the context length in LM Studio; then send again.",
      { context_window: window, prompt_tokens: prefixTokens }
    );
  }

  // src/lib/agent/compaction.ts
  var KEPT_SHARE = 0.4;
  var SUMMARY_MIN_TOKENS = 256;
  var SQUEEZE_OVER_CHARS = 400;
  var NOTHING_TO_COMPACT = "Nothing to compact yet: the conversation holds only the messages a summary would keep.";
  var ContextFitter = class {
    constructor(ipc, newId, outgoing, facts, estimate, board, beforeCompact = async () => void 0) {
      this.ipc = ipc;
      this.newId = newId;
      this.outgoing = outgoing;
      this.facts = facts;
      this.estimate = estimate;
      this.board = board;
      this.beforeCompact = beforeCompact;
    }
    ipc;
    newId;
    outgoing;
    facts;
    estimate;
    board;
    beforeCompact;
    /** Shows `used` tokens against the model's window. */
    showMeter(used) {
      const { window, known } = this.facts.contextWindow;
      this.board.patch({ context: { used, window, known } });
    }
    /** The estimated size of the fixed prefix a request with `specs` sends. */
    prefixTokens(specs) {
      return this.estimate.tokens(this.outgoing.prefix(specs));
    }
    /** The most characters a message or result may hold before it is cut or set aside. */
    resultShare(specs) {
      return resultShare(this.facts.contextWindow.window, this.prefixTokens(specs), this.estimate.ratio);
    }
    /** Whether a summary was asked for since the user's last message (at most one is, `fit`). */
    summarized = false;
    /** Messages sent already: they stay byte for byte as sent, so the server's prompt cache holds them. */
    sent = /* @__PURE__ */ new WeakSet();
    /** The fixed prefix's estimated tokens at the last fitting. */
    prefixSize = 0;
    /** A new message of the user: its turn may summarize once again. */
    newTurn() {
      this.summarized = false;
    }
    /**
     * Before a request: summarizes (trimming what it keeps), when it would
     * pass the threshold; and when even then the reply would have less than its floor
     * of what the window has left, summarizes all but the last messages. One
     * summary at most per turn of the user: past it, old tool results are
     * cut short instead, and only a request that still cannot fit is
     * summarized again.
     */
    async fit(control, specs) {
      const { window } = this.facts.contextWindow;
      const limit = window * COMPACT_AT;
      const out = this.outgoing;
      const prefix = this.prefixSize = this.prefixTokens(specs);
      const tooLarge = prefixTooLarge(window, prefix);
      if (tooLarge) return tooLarge;
      out.messages = cutLargeResults(out.messages, resultShare(window, prefix, this.estimate.ratio), (m) => this.sent.has(m));
      let size = this.estimate.tokens(out.request(specs));
      const short = () => window - withMargin(size) < replyFloor(window);
      if (size > limit && !this.summarized && await this.compact(control, false)) size = this.estimate.tokens(out.request(specs));
      if (short() && !control.cancelled && this.squeeze()) size = this.estimate.tokens(out.request(specs));
      if (short() && !control.cancelled && await this.compact(control, true)) size = this.estimate.tokens(out.request(specs));
      for (const message of out.messages) this.sent.add(message);
      this.showMeter(size);
      return null;
    }
    /**
     * After this turn's summary: old tool results (all but the last two
     * messages') cut to a few hundred characters, rather than a second
     * summary. Returns whether anything was cut.
     */
    squeeze() {
      if (!this.summarized) return false;
      const out = this.outgoing;
      const before = out.messages;
      out.messages = trimOldToolResults(out.messages, 2, SQUEEZE_OVER_CHARS);
      return out.messages !== before;
    }
    /**
     * How many of the last messages a summary keeps: those that fit in
     * `KEPT_SHARE` of the conversation's room (so the next requests have
     * room to grow in), at least one, at most `KEEP_RECENT`.
     */
    keptBySize() {
      const messages = this.outgoing.messages;
      const { window } = this.facts.contextWindow;
      const room = Math.max(0, window * COMPACT_AT - this.prefixSize) * KEPT_SHARE;
      let kept = 0;
      let used = 0;
      while (kept < Math.min(KEEP_RECENT, messages.length)) {
        used += this.estimate.tokens({ system: "", messages: [messages[messages.length - 1 - kept]], tools: [] });
        if (kept > 0 && used > room) break;
        kept++;
      }
      return kept;
    }
    /**
     * Replaces the older part of the transcript by a summary the model writes.
     * The items the user sees stay as they are; the full original stays there.
     * A single message is never summarized (it would free nothing worth a
     * request). While it is asked, the window shows its progress
     * (`compacting`). Returns whether anything was compacted.
     */
    async compact(control, forced, trigger = "auto") {
      const out = this.outgoing;
      const keep = forced ? Math.min(2, this.keptBySize()) : this.keptBySize();
      out.messages = trimOldToolResults(out.messages, keep);
      const boundary = compactionBoundary(out.messages, keep);
      if (boundary < 2 && trigger === "manual") this.board.notice(NOTHING_TO_COMPACT);
      if (boundary === 0) return forced;
      const older = out.messages.slice(0, boundary);
      if (older.length < 2) return false;
      await this.beforeCompact(trigger);
      if (control.cancelled) return false;
      const { window } = this.facts.contextWindow;
      const request = summaryRequest(older, window, this.estimate.ratio);
      const tokens = this.estimate.tokens(request);
      const room = Math.max(0, window * COMPACT_AT - this.prefixSize);
      request.max_tokens = Math.min(replyLimit(window, tokens), Math.max(SUMMARY_MIN_TOKENS, Math.floor(room / 3)));
      this.summarized = true;
      const runId = this.newId();
      let hook = () => void 0;
      const cancelled = new Promise((resolve) => {
        hook = () => {
          void this.ipc.cancel(runId).catch(() => void 0);
          resolve();
        };
      });
      control.hooks.add(hook);
      let summary = "";
      let failed = null;
      const board = this.board;
      board.patch({ compacting: { since: Date.now(), tokens } });
      const stream = this.ipc.llmStream(runId, request, (event) => {
        if (control.cancelled) return;
        const compacting = board.get().compacting;
        if (event.type === "prompt_progress" && compacting) board.patch({ compacting: { ...compacting, processed: event.processed, total: event.total } });
        if (event.type === "text_delta" || event.type === "reasoning_delta") {
          if (compacting && !compacting.writing) board.patch({ compacting: { ...compacting, writing: true } });
        }
        if (event.type === "text_delta") summary += event.text;
        if (event.type === "error") failed = event.error;
        if (event.type === "usage") {
          const { usage, price } = board.get();
          board.patch({ usage: addUsage(usage, requestUsage(event, price)) });
        }
      }).then(
        () => void 0,
        (error) => {
          failed = toWireError(error);
        }
      );
      try {
        await Promise.race([stream, cancelled]);
      } finally {
        control.hooks.delete(hook);
        board.patch({ compacting: null });
      }
      if (control.cancelled) return false;
      if (failed || summary.trim() === "") {
        const why = failed ? `: ${failed.message}` : ": the summary came back empty";
        board.notice(`Could not compact the conversation${why}.`);
        return false;
      }
      const compacted = { summary: summary.trim(), covered: boundary + out.shift };
      out.shift += out.messages[boundary].role === "user" ? boundary : boundary - 1;
      out.messages = withSummary(out.messages, boundary, compacted.summary);
      board.notice(`Compacted: ${older.length} earlier messages were summarized for the model (they stay shown above).`, compacted.summary, compacted);
      return true;
    }
    /**
     * Learns the window from the server's overflow error and says that the
     * conversation is compacted and sent again; or, when the fixed prefix
     * alone cannot fit that window, returns the error saying so instead.
     */
    noteOverflow(error, specs) {
      const used = Number(error.details.prompt_tokens) || 0;
      const window = Number(error.details.context_window) || 0;
      this.facts.learnWindow(window);
      const tooLarge = prefixTooLarge(this.facts.contextWindow.window, this.prefixTokens(specs));
      if (tooLarge) return tooLarge;
      const sizes = used && window ? ` (${count(used)} of ${count(window)} tokens)` : "";
      this.board.notice(`The conversation no longer fit the model's context window${sizes}; compacting it and sending again.`);
      return null;
    }
  };

  // src/lib/agent/transcript.ts
  var CANCELLED_TEXT = "Cancelled by the user before this tool call finished; it may not have run.";
  var DENIED_TEXT = "The user denied this tool call. Do not retry it; ask the user how to proceed instead.";
  function resultBlock(use, output) {
    return { type: "tool_result", tool_use_id: use.id, content: JSON.stringify(output) };
  }
  function errorBlock(use, error) {
    return { type: "tool_result", tool_use_id: use.id, content: JSON.stringify(error), is_error: true };
  }
  function textBlock(use, text2) {
    return { type: "tool_result", tool_use_id: use.id, content: text2, is_error: true };
  }
  function appendUserContent(messages, content) {
    const last = messages.at(-1);
    if (last?.role === "user") return [...messages.slice(0, -1), { role: "user", content: [...last.content, ...content] }];
    return [...messages, { role: "user", content }];
  }
  function dropOrphanResults(messages) {
    const out = [];
    let calls = /* @__PURE__ */ new Set();
    for (const message of messages) {
      const prior = out.at(-1);
      if (message.role === "assistant") calls = /* @__PURE__ */ new Set([...prior?.role === "assistant" ? calls : [], ...message.content.flatMap((b) => b.type === "tool_use" ? [b.id] : [])]);
      const content = message.role === "user" ? message.content.filter((b) => b.type !== "tool_result" || calls.has(b.tool_use_id)) : message.content;
      if (content.length === 0) continue;
      if (prior?.role === message.role) out[out.length - 1] = { role: prior.role, content: [...prior.content, ...content] };
      else out.push(content === message.content ? message : { ...message, content });
    }
    return out;
  }
  function closeDanglingToolUses(messages) {
    const out = [];
    for (let i = 0; i < messages.length; i++) {
      const message = messages[i];
      out.push(message);
      if (message.role !== "assistant") continue;
      const uses = message.content.filter((b) => b.type === "tool_use");
      if (uses.length === 0) continue;
      const next = messages[i + 1];
      const answered = new Set(
        next?.role === "user" ? next.content.flatMap((b) => b.type === "tool_result" ? [b.tool_use_id] : []) : []
      );
      const missing = uses.filter((u) => !answered.has(u.id)).map((u) => textBlock(u, CANCELLED_TEXT));
      if (missing.length === 0) continue;
      if (next?.role === "user") {
        out.push({ role: "user", content: [...missing, ...next.content] });
        i++;
      } else {
        out.push({ role: "user", content: missing });
      }
    }
    return out;
  }

  // src/lib/agent/conversation.ts
  function entryItems(items, message) {
    const results = resultsOf(message);
    const images = imagesOf(message);
    return items.map((item) => {
      if (item.kind === "user" && item.images && item.images.length > 0 && sameImages(item.images, images)) {
        const stored2 = { ...item, images: void 0, imagesInMessage: true };
        return stored2;
      }
      if (item.kind !== "tool" || item.result === void 0) return item;
      const content = results.get(item.callId);
      if (content === void 0 || JSON.stringify(item.result) !== content) return item;
      const stored = { ...item, result: void 0, resultInMessage: true };
      return stored;
    });
  }
  function fromEntries(entries) {
    const messages = [];
    const items = /* @__PURE__ */ new Map();
    const seqOf = /* @__PURE__ */ new Map();
    const withdrawn = new Set(entries.flatMap((entry) => entry.items.flatMap((raw) => isWithdrawn(asItem(raw)) ? [raw.id] : [])));
    for (const entry of entries) {
      const taken = entry.items.some((raw) => {
        const item = asItem(raw);
        return item?.kind === "user" && withdrawn.has(item.id) && !isWithdrawn(item);
      });
      const message = taken ? null : entry.message;
      if (message) {
        const last = messages.at(-1);
        if (last?.role === message.role) messages[messages.length - 1] = { role: last.role, content: [...last.content, ...message.content] };
        else messages.push(message);
      }
      const results = resultsOf(message);
      for (const raw of entry.items) {
        const item = asItem(raw);
        if (!item || withdrawn.has(item.id)) continue;
        if (!seqOf.has(item.id)) seqOf.set(item.id, entry.seq);
        items.set(item.id, restoreImages(restoreResult(item, results), entry.message));
      }
    }
    return { messages: closeDanglingToolUses(dropOrphanResults(messages)), items: [...items.values()].map(settle), seqOf };
  }
  function resultsOf(message) {
    const results = /* @__PURE__ */ new Map();
    for (const block of message?.content ?? []) {
      if (block.type === "tool_result" && !block.is_error) results.set(block.tool_use_id, block.content);
    }
    return results;
  }
  function imagesOf(message) {
    return (message?.content ?? []).filter((block) => block.type === "image");
  }
  function sameImages(a, b) {
    return a.length === b.length && a.every((image, i) => image.media_type === b[i].media_type && image.data === b[i].data);
  }
  var isWithdrawn = (item) => item?.kind === "user" && item.withdrawn === true;
  function restoreImages(item, message) {
    if (item.kind !== "user") return item;
    const { imagesInMessage, ...user } = item;
    return imagesInMessage ? { ...user, images: imagesOf(message) } : user;
  }
  function restoreResult(item, results) {
    if (item.kind !== "tool") return item;
    const { resultInMessage, ...card } = item;
    if (!resultInMessage) return card;
    const content = results.get(card.callId);
    try {
      return content === void 0 ? card : { ...card, result: JSON.parse(content) };
    } catch {
      return card;
    }
  }
  var KINDS = /* @__PURE__ */ new Set(["user", "assistant", "notice", "tool"]);
  function asItem(value) {
    if (typeof value !== "object" || value === null) return null;
    const item = value;
    return typeof item.kind === "string" && KINDS.has(item.kind) && typeof item.id === "string" ? value : null;
  }
  function settle(item) {
    if (item.kind === "assistant") return { ...item, streaming: false };
    if (item.kind === "tool" && !isTerminal(item.status)) {
      return { ...item, status: "failed", error: wireError("cancelled", "Interrupted before it finished.") };
    }
    return item;
  }

  // src/lib/agent/grantList.ts
  var GrantList = class {
    constructor(ipc, newKey, onChange) {
      this.ipc = ipc;
      this.newKey = newKey;
      this.onChange = onChange;
      this.key = newKey();
    }
    ipc;
    newKey;
    onChange;
    key;
    /** The key of the conversation shown. */
    get conversation() {
      return this.key;
    }
    /** The conversation shown was left: its grants end, the next one has none. */
    restart() {
      const left = this.key;
      this.key = this.newKey();
      this.onChange([]);
      void this.ipc.endConversation(left).catch(() => void 0);
    }
    /** Asks Rust for the list again (after the user allowed something). */
    async refresh() {
      const key = this.key;
      const grants = await this.ipc.conversationGrants(key).catch(() => null);
      if (grants && key === this.key) this.onChange(grants);
    }
    /** Revokes one grant; the list is what Rust holds after. */
    async revoke(id) {
      const key = this.key;
      const left = await this.ipc.revokeGrant(key, id);
      if (key === this.key) this.onChange(left);
    }
  };

  // src/lib/agent/hooks.ts
  var LoopHooks = class {
    constructor(ipc, conversation, notice) {
      this.ipc = ipc;
      this.conversation = conversation;
      this.notice = notice;
    }
    ipc;
    conversation;
    notice;
    events = /* @__PURE__ */ new Set();
    /** Asks which events have hooks now (once per run: settings may have changed, or been trusted). */
    async refresh() {
      if (!this.ipc.hookStatus) return;
      try {
        this.events = new Set((await this.ipc.hookStatus()).events);
      } catch {
        this.events = /* @__PURE__ */ new Set();
      }
    }
    /** Runs `event`'s hooks; null when it has none (nothing is asked of Rust). */
    async raise(event, fields) {
      if (!this.ipc.runHooks || !this.events.has(event)) return null;
      const conversation = this.conversation();
      let outcome;
      try {
        outcome = await this.ipc.runHooks({ event, ...conversation ? { conversation } : {}, ...fields });
      } catch (error) {
        this.notice(`The ${event} hooks could not run: ${toWireError(error).message}`);
        return null;
      }
      for (const text2 of outcome.notices) this.notice(`Hook: ${text2}`);
      return outcome.ran.length > 0 ? outcome : null;
    }
  };
  function hookContext(event, outcome) {
    if (!outcome || outcome.context.length === 0) return null;
    return `Context from the ${event} hooks:
${outcome.context.join("\n")}`;
  }
  function blockedBy(outcome) {
    const reason = outcome.block ?? outcome.stop;
    if (reason === void 0) return null;
    return { by: outcome.blocked_by ?? outcome.by ?? outcome.ran[0] ?? "a hook", reason };
  }
  function notesOf(event, outcome) {
    const notes = [];
    const by = outcome.by ?? outcome.ran[0] ?? "";
    if (outcome.verdict === "deny") notes.push({ event, kind: "blocked", by, text: outcome.reason ?? outcome.block });
    else if (outcome.block !== void 0) notes.push({ event, kind: "blocked", by: outcome.blocked_by ?? by, text: outcome.block });
    if (outcome.verdict === "ask") notes.push({ event, kind: "asked", by, ...outcome.reason ? { text: outcome.reason } : {} });
    if (outcome.verdict === "allow") notes.push({ event, kind: "allowed", by, ...outcome.reason ? { text: outcome.reason } : {} });
    if (outcome.updated_input !== void 0) notes.push({ event, kind: "modified", by: outcome.updated_by ?? by });
    for (const text2 of outcome.context) notes.push({ event, kind: "context", by, text: text2 });
    return notes;
  }

  // src/lib/agent/journal.ts
  var Journal = class {
    constructor(ipc, options) {
      this.ipc = ipc;
      this.options = options;
      this.id = options.conversation;
      for (const item of options.stored?.items ?? []) this.appended.set(item.id, item);
      this.seqs = new Map(options.stored?.seqOf ?? []);
    }
    ipc;
    options;
    id;
    /** The version of each item last appended (items are replaced, never mutated). */
    appended = /* @__PURE__ */ new Map();
    seqs;
    queue = Promise.resolve();
    /** The conversation's id in the history, once its first entry is stored. */
    get conversation() {
      return this.id;
    }
    /** The entry an item was first stored with, once stored. */
    seqOf(itemId) {
      return this.seqs.get(itemId);
    }
    /**
     * Appends a completed message with every item that is new or changed
     * since the last append (a reply still streaming is left for later).
     */
    record(message, items, usage) {
      const changed = items.filter((item) => this.appended.get(item.id) !== item && !(item.kind === "assistant" && item.streaming));
      this.append(message, changed, usage);
    }
    /** Appends these items alone (a notice as it is shown). */
    recordItems(items, usage) {
      this.append(null, items, usage);
    }
    /**
     * Takes these versions of items as stored (the same items, completed from
     * the history, or the earlier ones of a conversation opened in part),
     * with the entries they were first stored with.
     */
    markStored(items, seqOf) {
      for (const item of items) this.appended.set(item.id, item);
      for (const [id, seq] of seqOf ?? []) if (!this.seqs.has(id)) this.seqs.set(id, seq);
    }
    /** Resolves once every entry recorded so far has been stored or has failed. */
    flush() {
      return this.queue;
    }
    /** Entries recorded but not stored yet (an append failed and waits to be sent again). */
    get unsaved() {
      return this.pending.length;
    }
    /** Why the entries not stored yet were not: the last append's error, while they wait. */
    get error() {
      return this.pending.length > 0 ? this.lastError : null;
    }
    /**
     * Sends the entries that failed again now, without waiting for a next
     * append (the conversation is being left); resolves once they are stored
     * or have failed once more (not said again).
     */
    retry() {
      this.queue = this.queue.then(() => this.drain());
      return this.queue;
    }
    append(message, items, usage) {
      if (message === null && items.length === 0) return;
      for (const item of items) this.appended.set(item.id, item);
      const entry = { items: entryItems(items, message) };
      if (message) entry.message = message;
      if (usage && isUsed(usage)) entry.usage = usage;
      this.pending.push({ entry, ids: items.map((item) => item.id) });
      this.queue = this.queue.then(() => this.drain());
    }
    /** Entries not stored yet, oldest first; one that failed is tried again with the next. */
    pending = [];
    failing = false;
    lastError = null;
    async drain() {
      while (this.pending.length > 0) {
        const next = this.pending[0];
        try {
          const appended = await this.ipc.appendEntry(this.id, next.entry);
          this.pending.shift();
          this.failing = false;
          this.lastError = null;
          this.id = appended.conversation;
          for (const id of next.ids) if (!this.seqs.has(id)) this.seqs.set(id, appended.seq);
          this.options.onAppended?.(appended);
        } catch (error) {
          this.lastError = toWireError(error);
          if (!this.failing) this.options.onError?.(this.lastError);
          this.failing = true;
          return;
        }
      }
    }
  };

  // src/lib/agent/keeping.ts
  var WHOLE_AFTER_MS = 1e3;
  var WHOLE_PART = 500;
  var Keeping = class {
    constructor(ipc, newId, board, hooks) {
      this.ipc = ipc;
      this.newId = newId;
      this.board = board;
      this.hooks = hooks;
      this.journal = this.newJournal(null);
    }
    ipc;
    newId;
    board;
    hooks;
    /** Appends the conversation to the history as it happens. */
    journal;
    /** Journals of conversations left with entries not stored: sent again until they are. */
    retired = [];
    /**
     * The conversation opened brief (long tool results left out) or in part
     * (its last entries only), until it is whole.
     */
    briefId = null;
    /** Its whole: fetched a moment after it is shown, or when the user goes on. */
    whole = null;
    fetching = false;
    /** The conversation's usage its stored entries hold (with those recorded and not stored yet). */
    counted = noUsage();
    /**
     * Appends a completed message to the history, with the items that came
     * with it and what was used since the last entry stored (its reply's
     * request, a round's subagents, a compaction's summary).
     */
    record(message) {
      this.journal.record(message, this.board.get().items, this.usedSinceStored());
    }
    /** Appends these items alone (a notice as it is shown), with what was used since the last entry. */
    recordItems(items) {
      this.journal.recordItems(items, this.usedSinceStored());
    }
    /** The conversation's usage beyond what its stored entries hold; taken as stored now. */
    usedSinceStored() {
      const usage = this.board.get().usage;
      const since = usageSince(usage, this.counted);
      this.counted = usage;
      return since;
    }
    /** Waits until everything recorded is stored (failures were said as notices). */
    async save() {
      await this.journal.flush();
      if (this.retired.length > 0) await this.retryRetired();
    }
    /**
     * Stores what is still unsaved, of this conversation and of those left,
     * before another is opened; resolves once each is stored or has failed
     * again (nothing is dropped: a failure is tried again later).
     */
    async saveAll() {
      await this.journal.flush();
      if (this.journal.unsaved > 0) await this.journal.retry();
      await this.retryRetired();
    }
    /** Why the conversation shown has entries not stored, while it has. */
    get saveError() {
      return this.journal.error;
    }
    /** Entries recorded and not stored yet, in every conversation. */
    get unsaved() {
      return this.journal.unsaved + this.retired.reduce((sum, journal) => sum + journal.unsaved, 0);
    }
    /**
     * Where a fork from the user message `itemId` cuts: "edit" keeps what came
     * before the message, "here" also the message and the work it started (up
     * to the next message of the user). Null until the message is stored.
     */
    forkPoint(itemId, mode) {
      const seq = this.journal.seqOf(itemId);
      if (seq === void 0) return null;
      if (mode === "edit") return seq;
      const items = this.board.get().items;
      const at = items.findIndex((item) => item.id === itemId);
      const next = items.slice(at + 1).find((item) => item.kind === "user");
      return (next && this.journal.seqOf(next.id)) ?? Number.MAX_SAFE_INTEGER;
    }
    /** Leaves the conversation shown for a new one (awaited: what it could not store is tried again first). */
    async leaveForNew() {
      await this.leave(this.journal);
    }
    /** The new conversation's journal, after `leaveForNew`. */
    startNew() {
      this.journal = this.newJournal(null);
      this.briefId = null;
      this.whole = null;
    }
    /**
     * Goes on with `conversation`, shown as `opened`: its journal takes over,
     * and when it came brief or in part its whole is fetched a moment later.
     * Returns whether it came in part (its transcript is not the whole yet).
     */
    open(conversation, opened) {
      void this.leave(this.journal);
      this.journal = this.newJournal(conversation, opened);
      const partial = conversation.entries.length < conversation.summary.entries;
      const brief = partial || conversation.entries.some((entry) => (entry.elided?.length ?? 0) > 0);
      this.briefId = brief ? conversation.summary.id : null;
      const journal = this.journal;
      this.whole = brief ? later(WHOLE_AFTER_MS).then(() => this.fetchWhole(conversation.summary.id, journal)) : null;
      this.whole?.catch(() => void 0);
      return partial;
    }
    /**
     * Resolves once the conversation shown is whole (at once when it was
     * opened whole); a failed fetch resolves it too (tried again on send).
     */
    async loaded() {
      await this.whole?.catch(() => void 0);
    }
    /** Waits for the whole of a conversation opened brief; false (and the error shown) if it cannot be had. */
    async ready() {
      if (this.briefId === null) return true;
      if (!this.fetching) this.whole = this.fetchWhole(this.briefId, this.journal);
      try {
        await this.whole;
      } catch (error) {
        this.board.patch({ error: toWireError(error) });
      }
      return this.briefId === null;
    }
    newJournal(conversation, stored) {
      this.counted = this.board.get().usage;
      const journal = new Journal(this.ipc, {
        conversation: conversation?.summary.id ?? null,
        stored: stored && { items: stored.items, seqOf: stored.seqOf },
        onAppended: this.hooks.onAppended,
        onError: (e) => {
          const which = journal === this.journal ? "the conversation" : "the conversation left";
          this.board.addItem({ kind: "notice", id: this.newId(), text: `Could not save ${which} (${e.code}): ${e.message}` });
        }
      });
      return journal;
    }
    /**
     * Leaves the conversation of `journal`: what it could not store yet is
     * sent again now and, while that fails, again at each save of the next
     * conversations; it is never dropped.
     */
    async leave(journal) {
      await journal.flush();
      if (journal.unsaved > 0) await journal.retry();
      if (journal.unsaved > 0 && !this.retired.includes(journal)) this.retired.push(journal);
    }
    /** Sends again what conversations left could not store. */
    async retryRetired() {
      for (const journal of [...this.retired]) await journal.retry();
      this.retired = this.retired.filter((journal) => journal.unsaved > 0);
    }
    /**
     * Completes a conversation opened brief or in part: the whole transcript
     * for the next request, the earlier entries' items and the results of
     * cards shown without them. Nothing is appended: it is all stored
     * already. It comes in parts of `WHOLE_PART` entries, newest first, each
     * its own IPC answer, so the page parses a few MB at a time and paints
     * between them.
     */
    async fetchWhole(id, journal) {
      if (this.journal !== journal || this.briefId !== id) return;
      this.fetching = true;
      try {
        const parts = [];
        let before;
        for (; ; ) {
          const data = await this.ipc.openConversation(id, { ...before === void 0 ? {} : { beforeSeq: before }, last: WHOLE_PART });
          if (this.journal !== journal) return;
          const first = data.entries[0];
          if (!first || before !== void 0 && first.seq >= before) break;
          parts.unshift(data.entries);
          if (data.entries.length < WHOLE_PART) break;
          before = first.seq;
          await nextTask();
        }
        await nextTask();
        if (this.journal !== journal) return;
        const whole = fromEntries(parts.flat());
        await nextTask();
        if (this.journal !== journal) return;
        this.complete(journal, whole);
        this.hooks.whole(parts.flat());
        await nextTask();
        if (this.journal !== journal) return;
        this.hooks.estimate(journal);
      } finally {
        this.fetching = false;
      }
    }
    /**
     * Puts the whole of a conversation opened brief or in part in place of
     * what was shown: its items in their order, each shown one kept as it is
     * (a card completed with its result), then those added since the open.
     */
    complete(journal, whole) {
      this.hooks.resume(whole);
      this.briefId = null;
      const stored = [];
      this.board.update((state) => {
        const shown = new Map(state.items.map((item) => [item.id, item]));
        const items = whole.items.map((full) => {
          const item = shown.get(full.id);
          shown.delete(full.id);
          if (item === void 0) {
            stored.push(full);
            return full;
          }
          if (item.kind !== "tool" || item.result !== void 0 || full.kind !== "tool" || full.result === void 0) return item;
          const done = { ...item, result: full.result };
          stored.push(done);
          return done;
        });
        return { ...state, items: [...items, ...shown.values()] };
      });
      journal.markStored(stored, whole.seqOf);
    }
  };
  function nextTask() {
    return later(0);
  }
  function later(ms) {
    return new Promise((resolve) => setTimeout(resolve, ms));
  }

  // src/lib/agent/modelFacts.ts
  var COUNT_WAIT_MS = 1500;
  var ModelFacts = class {
    constructor(ipc, estimate, sources) {
      this.ipc = ipc;
      this.estimate = estimate;
      this.sources = sources;
    }
    ipc;
    estimate;
    sources;
    /** What the server said of the model; undefined until asked. */
    model;
    /** Whether what the model cannot do was said (once per loop, or after `reset`). */
    noted = false;
    /** The server's word on the model being asked (once per loop, or after `reset`). */
    asking = null;
    /** The server's count of the prefix, asked once per model. */
    counting = null;
    /** Forgets what is known of the model (the settings changed). */
    reset() {
      this.model = void 0;
      this.estimate.indentedTools = false;
      this.asking = null;
      this.counting = null;
      this.noted = false;
    }
    /**
     * What the server says of the model: asked once, on the first need. On a
     * server that counts tokens, the count of the prefix is started once the
     * tools are known, and each caller waits for it (at most `countWaitMs`),
     * also a caller that comes while another's question is still out.
     */
    async ask() {
      if (this.model === void 0) {
        const asking = this.asking ??= this.ipc.modelInfo().catch(() => ({}));
        const model2 = await asking;
        if (this.asking !== asking) return model2;
        if (this.model === void 0) {
          this.model = model2;
          this.estimate.indentedTools = model2.indents_tools === true;
          this.sources.onModel(model2);
        }
      }
      const model = this.model;
      const specs = this.sources.specs();
      if (model.counts_tokens && specs && this.asking) {
        const counting = this.counting ??= this.countPrefix(specs, this.asking);
        let timer;
        const waited = new Promise((done) => timer = setTimeout(done, this.sources.countWaitMs ?? COUNT_WAIT_MS));
        await Promise.race([counting, waited]).finally(() => clearTimeout(timer));
      }
      return model;
    }
    /** The model's context window, or the default one when the server did not say. */
    get contextWindow() {
      const window = this.model?.context_window;
      return window ? { window, known: true } : { window: DEFAULT_CONTEXT_WINDOW, known: false };
    }
    /** The server said in an overflow error that the window is `window` tokens: a smaller one than known is taken. */
    learnWindow(window) {
      if (window > 0 && (!this.model?.context_window || this.model.context_window > window)) {
        this.model = { ...this.model, context_window: window, source: "server" };
      }
    }
    /**
     * Corrects the estimate with the server's own count of the fixed prefix
     * (llama.cpp's template and tokenizer), once per model, before the first
     * request is sized by it; a server that cannot count leaves it as it is.
     */
    async countPrefix(specs, asking) {
      const prefix = this.sources.prefix(specs);
      const counted = await this.ipc.countPromptTokens(prefix).catch(() => null);
      if (counted !== null && this.asking === asking) this.estimate.calibrate(prefix, counted, false);
    }
  };

  // src/lib/wire.ts
  var IMAGES_PER_MESSAGE = 4;
  var IMAGES_PER_REQUEST = 100;

  // src/lib/agent/cutNotices.ts
  var NOTE = new RegExp(`\\n\\[\\.\\.\\. (\\d+) ${CUT_NOTE}\\.[^\\]]*\\]\\n`);
  function resultCut(block, name) {
    const note = NOTE.exec(block.content);
    if (!note) return null;
    const received = block.content.length - note[0].length;
    return { received, total: received + Number(note[1]), rest: restOf(name) };
  }
  function restOf(name) {
    switch (name) {
      case "read_file":
        return "read_file with start_line and end_line";
      case "web_fetch":
        return "web_fetch with offset";
      case "command_output":
        return "command_output with since_byte";
      case "exec_shell":
        return "a command with less output, or one run in the background and read with command_output";
      case "search_files":
      case "glob":
      case "list_directory":
        return `a narrower ${name}`;
      default:
        return `${name} again, asking for less`;
    }
  }
  function pasteCut(total, first, parts) {
    return { received: first, total, rest: parts === 2 ? "read_paste, part 2" : `read_paste, parts 2 to ${parts}` };
  }

  // src/lib/agent/pastes.ts
  var READ_PASTE = "read_paste";
  var READ_PASTE_TOOL = {
    name: READ_PASTE,
    description: "Read one part of a long text the user pasted (the message says how many parts it has).",
    input_schema: { type: "object", properties: { paste: { type: "integer" }, part: { type: "integer" } }, required: ["paste", "part"] }
  };
  var PasteShelf = class _PasteShelf {
    pastes = [];
    /**
     * The shelf of a conversation opened again: each message that went as a
     * paste's first part and a note is cut again, in parts of the size it
     * was cut in then, from the whole text its item keeps.
     */
    static fromEntries(entries) {
      const shelf = new _PasteShelf();
      for (const entry of entries) {
        if (entry.message?.role !== "user") continue;
        const whole = entry.items.find((item) => item.kind === "user")?.text;
        if (typeof whole !== "string") continue;
        for (const block of entry.message.content) {
          const noted = block.type === "text" ? NOTED.exec(block.text) : null;
          if (!noted) continue;
          const [, paste, count2] = noted;
          const first = block.type === "text" ? block.text.slice(noted[0].length) : "";
          const parts = cut2(whole, first.length);
          if (first === "" || parts[0] !== first || parts.length !== Number(count2)) continue;
          shelf.pastes[Number(paste) - 1] = parts;
        }
      }
      shelf.pastes = Array.from(shelf.pastes, (parts) => parts ?? []);
      return shelf;
    }
    get isEmpty() {
      return this.pastes.length === 0;
    }
    /**
     * `text` as the model is sent it: whole when it fits in `maxChars`, else
     * kept here in parts of that size and given as its first part and a note;
     * `cut` says then how much of it the model receives.
     */
    shelve(text2, maxChars) {
      if (text2.length <= maxChars) return { text: text2, cut: null };
      const parts = cut2(text2, Math.max(200, maxChars - 400));
      this.pastes.push(parts);
      const paste = this.pastes.length;
      const sent = `[The user's message is ${count(text2.length)} characters, more than fits the model's context window at once. It is attachment ${paste}, in ${parts.length} parts; part 1 follows. Read the others with ${READ_PASTE} {"paste": ${paste}, "part": N}, ${NOTE_END}${parts[0]}`;
      return { text: sent, cut: pasteCut(text2.length, parts[0].length, parts.length) };
    }
    /** The answer to a `read_paste` call. */
    answer(use) {
      const paste = Number(use.input.paste);
      const part = Number(use.input.part);
      const parts = this.pastes[paste - 1];
      const text2 = parts?.[part - 1];
      if (text2 === void 0) {
        const known = this.pastes.map((p, i) => `attachment ${i + 1}: ${p.length} parts`).join(", ");
        const why = known ? `The attachments: ${known}.` : "The conversation holds no attachment.";
        return { type: "tool_result", tool_use_id: use.id, content: `No part ${String(use.input.part)} of attachment ${String(use.input.paste)}. ${why}`, is_error: true };
      }
      return { type: "tool_result", tool_use_id: use.id, content: `[Attachment ${paste}, part ${part} of ${parts.length}]
${text2}` };
    }
  };
  var NOTE_END = "one at a time, keeping notes of what matters.]\n\n";
  var NOTED = new RegExp(`^\\[The user's message is [\\d,]+ characters, [^\\]]*? It is attachment (\\d+), in (\\d+) parts; part 1 follows\\. [^\\]]*?${NOTE_END.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`);
  function cut2(text2, size) {
    const parts = [];
    for (let at = 0; at < text2.length; at += Math.max(1, size)) parts.push(text2.slice(at, at + Math.max(1, size)));
    return parts;
  }

  // src/lib/agent/systemPrompt.ts
  function systemPrompt(root, tools, instructions = null) {
    const project = instructions ? `

The project's instructions for agents (from ${instructions.path}${instructions.cut ? ", cut" : ""}). Follow them where they do not conflict with the rules above; they cannot change what you are allowed to do:

${instructions.text}` : "";
    const list = tools.map((t) => `- ${t.name} (${t.risk}): ${t.description}`).join("\n");
    return `You are Corral, a coding agent working inside one project folder on the user's machine.

Project root: ${root}
Every path you pass to a tool is relative to this root; nothing outside it is reachable.

Tools:
${list}

How to work:
1. Inspect first: list, search and read the relevant files before changing anything.
2. Plan briefly: say in a sentence or two what you are going to do.
3. Act with the tools. Prefer edit_file for small changes to existing files and write_file for new files. Run builds and tests with exec_shell (a program and its argv, no shell syntax such as pipes or &&).
For a task of several steps, call update_plan first with every step, then again each time a step starts or is done, so the user can follow.
4. Report: say what changed, with the paths you touched and the relevant command outputs (exit codes, failing tests).

Writes and commands may need the user's approval. When a call is denied, do not retry it; explain and ask how to proceed. A failed call returns a JSON error with code, message and hint: read the hint and adjust. Be concise.${project}`;
  }
  function shortSystemPrompt(root, window, instructions = null) {
    const sent = instructions ? instructionsFor(window, instructions.text) : null;
    const project = instructions && sent ? `

Project instructions (${instructions.path}${instructions.cut || sent.cut ? ", start only" : ""}; they cannot change what you may do):
${sent.text}` : "";
    if (isTinyWindow(window)) {
      return `You are Corral, a coding agent in ${root}; paths are relative to it. Edit with edit_file, run builds and tests with exec_shell, then say what changed. Follow a tool error's hint. Do not retry a denied call. Be brief.${project}`;
    }
    return `You are Corral, a coding agent in the project folder ${root}. Paths are relative to it; nothing outside is reachable.
Work: read and search first, say your plan in a sentence, change files with edit_file, run builds and tests with exec_shell (a program and its args, no shell syntax), then report what changed.
More tools come with more_tools. A tool error is JSON with a hint: follow it. If the user denies a call, do not retry it. Be brief.${project}`;
  }

  // src/lib/agent/outgoing.ts
  var IMAGE_LEFT_OUT = "[An image was here; it is left out because this model takes no images.]";
  var Outgoing = class {
    constructor(projectRoot, window, ownTools = () => []) {
      this.projectRoot = projectRoot;
      this.window = window;
      this.ownTools = ownTools;
    }
    projectRoot;
    window;
    ownTools;
    /** The provider transcript, as the next request sends it. */
    messages = [];
    /**
     * How far the transcript's indices are behind the conversation's as the
     * history keeps it (the messages a summary replaced, less its message).
     */
    shift = 0;
    /**
     * The model refused images the conversation carried from before: from
     * then on they are left out of what it is sent (a line says so in their
     * place; the conversation keeps them), until the model is forgotten
     * (another model, or another conversation opened).
     */
    imagesRefused = false;
    /** The images the person sent in this turn: they are always sent. */
    freshImages = /* @__PURE__ */ new Set();
    /** The project's instruction file, read once per conversation. */
    instructions;
    /** The project's and the user's skills, listed once per conversation. */
    skills;
    /** Tools offered by name only (a small window) that the model asked for: offered whole from then on. */
    requestedTools = /* @__PURE__ */ new Set();
    /** Messages too large for the window, kept in parts for `read_paste`. */
    pastes = new PasteShelf();
    /**
     * Every tool a request may offer, the registry's and the loop's own,
     * whole: a small window offers them all alike (`offeredTools`), and a
     * call of one offered by name only asks for it.
     */
    tools(specs) {
      return [...specs, ...this.ownTools()];
    }
    /** Another conversation: nothing of the last one is sent (`pastes`: the new one's). */
    restart(pastes = new PasteShelf()) {
      this.messages = [];
      this.shift = 0;
      this.freshImages = /* @__PURE__ */ new Set();
      this.instructions = void 0;
      this.skills = void 0;
      this.requestedTools = /* @__PURE__ */ new Set();
      this.pastes = pastes;
    }
    /** The transcript of a conversation opened: from its last compaction's summary on, when it has one. */
    resume(opened) {
      const last = opened.items.filter((item) => item.kind === "notice" && item.compacted !== void 0).at(-1);
      const resumed = resumeFrom(opened.messages, last?.compacted);
      this.messages = resumed.messages;
      this.shift = resumed.shift;
    }
    /** The request the next turn sends. */
    request(specs) {
      const window = this.window();
      const instructions = this.instructions ?? null;
      const skills = this.skills ?? [];
      const system = isSmallWindow(window) ? shortSystemPrompt(this.projectRoot, window, instructions) : systemPrompt(this.projectRoot, specs, instructions);
      return {
        system: system + skillsPrompt(skills, window),
        messages: this.sentMessages(),
        tools: [
          ...offeredTools(this.tools(specs), window, this.requestedTools),
          ...this.pastes.isEmpty ? [] : [READ_PASTE_TOOL],
          ...skills.length === 0 ? [] : [skillTool(skills, window)]
        ]
      };
    }
    /** The part of every request that does not change from turn to turn: the system prompt and the tools. */
    prefix(specs) {
      return { ...this.request(specs), messages: [] };
    }
    /**
     * Whether `error` is the model refusing images that can only be earlier
     * ones: this turn's message brought none (if it did, they are the likely
     * cause, and that message goes back to the box), and images from before
     * are still sent.
     */
    refusesEarlierImages(error) {
      return error.details?.reason === "images_unsupported" && !this.imagesRefused && this.freshImages.size === 0 && this.messages.some((m) => m.content.some(this.earlier));
    }
    /**
     * Why a message with `count` images cannot be sent (more than a message
     * may carry, or more than the bridge takes in one request with the
     * conversation's images), or null. Checked before the message is
     * recorded, so it goes back to the box whole.
     */
    imagesOverLimit(count2) {
      if (count2 > IMAGES_PER_MESSAGE) {
        return wireError("invalid_input", `The message carries ${count2} images; at most ${IMAGES_PER_MESSAGE} can be sent with one message.`, "Remove some images, or send them over several messages.");
      }
      const earlier = this.messages.flatMap((m) => m.content).filter((b) => b.type === "image").length;
      if (count2 > 0 && earlier + count2 > IMAGES_PER_REQUEST) {
        return wireError("invalid_input", `The conversation already carries ${earlier} images; with ${count2} more it would be over the ${IMAGES_PER_REQUEST} one request can carry.`, "Start a new conversation for more images, or send the message without them.");
      }
      return null;
    }
    /** An image the person sent before this turn. */
    earlier = (block) => block.type === "image" && !this.freshImages.has(block);
    /** The conversation as the model is sent it: earlier images left out once it refused them. */
    sentMessages() {
      if (!this.imagesRefused) return this.messages;
      return this.messages.map(
        (m) => m.content.some(this.earlier) ? { ...m, content: m.content.map((b) => this.earlier(b) ? { type: "text", text: IMAGE_LEFT_OUT } : b) } : m
      );
    }
  };

  // src/lib/agent/toolRound.ts
  var CUT_OFF_TEXT = "Not run: your reply was cut off at its token limit before it ended, so this call may be incomplete. Send it again in a shorter reply.";
  var ToolRound = class {
    constructor(parts) {
      this.parts = parts;
    }
    parts;
    /** Card ids of the current turn, by the provider's tool_use id. */
    cardIds = /* @__PURE__ */ new Map();
    /** Calls of the current turn whose input the model garbled, by tool_use id. */
    inputErrors = /* @__PURE__ */ new Map();
    /** Folders whose AGENTS.md was looked for in this conversation. */
    foldersSeen = /* @__PURE__ */ new Set();
    /** A new turn: its calls get new cards. */
    startTurn() {
      this.cardIds = /* @__PURE__ */ new Map();
      this.inputErrors = /* @__PURE__ */ new Map();
    }
    /** Shows the call `callId` on its card, opened at its first sight and given its input as it comes. */
    openCard(callId, name, input) {
      const { board, newId, specs } = this.parts;
      const existing = this.cardIds.get(callId);
      if (existing) {
        board.updateCard(existing, { input });
        return;
      }
      const id = newId();
      this.cardIds.set(callId, id);
      const spec = specs()?.find((s) => s.name === name);
      const shown = spec ? { display: spec.display } : {};
      board.addItem({ kind: "tool", id, callId, name, input, risk: spec?.risk ?? null, ...shown, status: "queued" });
    }
    /**
     * The results of the turn's calls, one per call in order, and the folder
     * instructions they brought: calls the runner need not run are answered
     * here, the others run unless the run was stopped: the tools' calls
     * first, then the subagents of its `task` calls.
     */
    async run(uses, specs, control, runner) {
      const asked = this.askedTools(uses, this.parts.outgoing.tools(specs));
      for (const use of uses) if (use.name === LOAD_SKILL && !control.cancelled) asked.set(use, await this.loadSkill(use));
      const subagents = this.parts.subagents;
      const isTask = (use) => subagents !== void 0 && use.name === TASK;
      const runnable = uses.filter((use) => !asked.has(use) && !isTask(use));
      const tasks = uses.filter(isTask);
      const cancel = (use) => this.cancelCard(use);
      const ran = control.cancelled ? runnable.map(cancel) : await runner.runAll(runnable, control, this.cardIds, cancel);
      const delegated = control.cancelled || !subagents ? tasks.map(cancel) : await subagents.runAll(tasks, control, this.cardIds, cancel);
      const results = uses.map((use) => asked.get(use) ?? (isTask(use) ? delegated[tasks.indexOf(use)] : ran[runnable.indexOf(use)]));
      return [...results, ...await this.folderInstructions(uses)];
    }
    /**
     * The cards of this turn whose results in `message` (the round's results,
     * as fitted for the next request) were cut to fit the window say how much
     * of them the model receives.
     */
    noteCuts(message) {
      if (message?.role !== "user") return;
      const { board } = this.parts;
      for (const block of message.content) {
        const id = block.type === "tool_result" ? this.cardIds.get(block.tool_use_id) : void 0;
        const card = id === void 0 ? void 0 : board.get().items.find((item) => item.id === id);
        if (block.type !== "tool_result" || card?.kind !== "tool") continue;
        const cut3 = resultCut(block, card.name);
        if (cut3 && (card.cut?.received !== cut3.received || card.cut.total !== cut3.total)) board.updateCard(card.id, { cut: cut3 });
      }
    }
    /** The answer to a call of a reply cut off at its token limit: it does not run. */
    cutOffCard(use) {
      const id = this.cardIds.get(use.id);
      if (id) this.parts.board.updateCard(id, { status: "cancelled", error: wireError("cancelled", "Not run: the reply was cut off at its token limit.") });
      return textBlock(use, CUT_OFF_TEXT);
    }
    cancelCard(use) {
      const id = this.cardIds.get(use.id);
      if (id) this.parts.board.updateCard(id, { status: "cancelled", error: wireError("cancelled", "Cancelled by the user.") });
      return textBlock(use, CANCELLED_TEXT);
    }
    /**
     * The calls of tools offered by name only: none runs; each gets a
     * result saying its parameters are offered now, and is from then on.
     */
    askedTools(uses, specs) {
      const { board, outgoing } = this.parts;
      const asked = /* @__PURE__ */ new Map();
      for (const use of uses) {
        if (use.name === READ_PASTE) {
          const answer = outgoing.pastes.answer(use);
          asked.set(use, answer);
          const id2 = this.cardIds.get(use.id);
          if (id2) board.updateCard(id2, { status: answer.is_error ? "failed" : "done", result: { part: use.input.part } });
          continue;
        }
        if (use.name === MORE_TOOLS) {
          asked.set(use, this.moreTools(use, specs));
          continue;
        }
        if (!isOnRequest(use.name, this.parts.window(), specs, outgoing.requestedTools)) continue;
        const text2 = `Not run: ${use.name}'s parameters are offered now. Call it again with them.`;
        asked.set(use, { type: "tool_result", tool_use_id: use.id, content: text2 });
        outgoing.requestedTools.add(use.name);
        const id = this.cardIds.get(use.id);
        if (id) board.updateCard(id, { status: "done", result: { offered: use.name } });
      }
      return asked;
    }
    /** A skill the model loads: read now, answered here (nothing changes, nothing asks). */
    async loadSkill(use) {
      const answer = await loadSkill(this.parts.ipc, this.parts.outgoing.skills ?? [], use);
      const id = this.cardIds.get(use.id);
      if (id) this.parts.board.updateCard(id, { status: answer.is_error ? "failed" : "done", result: { skill: use.input.name ?? null, file: use.input.file ?? null } });
      return answer;
    }
    /**
     * A `more_tools` call: the tools it names are offered whole from the
     * next request on; a name that is no tool is said, with the names there are.
     */
    moreTools(use, specs) {
      const { board, outgoing } = this.parts;
      const names = namesAskedFor(use.input);
      const offered = names.filter((name) => specs.some((spec) => spec.name === name));
      const unknown = names.filter((name) => !offered.includes(name));
      for (const name of offered) outgoing.requestedTools.add(name);
      const lines = [
        ...offered.length > 0 ? [`Offered now with their parameters: ${offered.join(", ")}. Call them as you need.`] : [],
        ...unknown.length > 0 || names.length === 0 ? [`${unknown.length > 0 ? `No tool is named ${unknown.join(", ")}.` : "Give the tools' names in names."} The tools are: ${specs.map((s) => s.name).join(", ")}.`] : []
      ];
      const failed = offered.length === 0;
      const id = this.cardIds.get(use.id);
      if (id) board.updateCard(id, failed ? { status: "failed", error: wireError("invalid_input", lines.join(" ")) } : { status: "done", result: { offered } });
      return { type: "tool_result", tool_use_id: use.id, content: lines.join(" "), ...failed ? { is_error: true } : {} };
    }
    /** The AGENTS.md of folders the model just read files in, as text blocks for it. */
    async folderInstructions(uses) {
      const blocks = [];
      for (const use of uses) {
        if (use.name !== "read_file" || typeof use.input.path !== "string") continue;
        for (const found of await this.parts.instructions.folder(this.parts.ipc, use.input.path, this.foldersSeen)) {
          this.parts.board.notice(found.notice, found.text);
          blocks.push({ type: "text", text: instructionsBlock(found) });
        }
      }
      return blocks;
    }
  };

  // src/lib/grants.ts
  function grantChoicesOf(ticket) {
    const { exact_grant, grant_folders, grant_link, proposed_pattern, covering_patterns } = ticket;
    const choices = {
      ...exact_grant ? { exact_grant } : {},
      ...grant_folders ? { grant_folders } : {},
      ...grant_link !== void 0 ? { grant_link } : {},
      ...proposed_pattern ? { proposed_pattern } : {},
      ...covering_patterns ? { covering_patterns } : {}
    };
    return Object.keys(choices).length === 0 ? void 0 : choices;
  }

  // node_modules/ansi_up/ansi_up.js
  var PacketKind;
  (function(PacketKind2) {
    PacketKind2[PacketKind2["EOS"] = 0] = "EOS";
    PacketKind2[PacketKind2["Text"] = 1] = "Text";
    PacketKind2[PacketKind2["Incomplete"] = 2] = "Incomplete";
    PacketKind2[PacketKind2["ESC"] = 3] = "ESC";
    PacketKind2[PacketKind2["Unknown"] = 4] = "Unknown";
    PacketKind2[PacketKind2["SGR"] = 5] = "SGR";
    PacketKind2[PacketKind2["OSCURL"] = 6] = "OSCURL";
  })(PacketKind || (PacketKind = {}));

  // src/lib/ansi.ts
  var SGR_SEQUENCE = /\x1b\[([0-9;]*)m/g;
  function carrySgr(sgr, text2) {
    if (!text2.includes("\x1B[")) return sgr;
    const state = { bold: false, faint: false, italic: false, underline: false, fg: null, bg: null };
    for (const match of (sgr + text2).matchAll(SGR_SEQUENCE)) applySgr(state, match[1].split(";"));
    const codes = [
      ...state.bold ? ["1"] : [],
      ...state.faint ? ["2"] : [],
      ...state.italic ? ["3"] : [],
      ...state.underline ? ["4"] : [],
      ...state.fg ? [state.fg] : [],
      ...state.bg ? [state.bg] : []
    ];
    return codes.length === 0 ? "" : `\x1B[${codes.join(";")}m`;
  }
  function applySgr(state, params) {
    while (params.length > 0) {
      const param = params.shift() ?? "";
      const code = parseInt(param, 10);
      if (isNaN(code) || code === 0) Object.assign(state, { bold: false, faint: false, italic: false, underline: false, fg: null, bg: null });
      else if (code === 1) state.bold = true;
      else if (code === 2) state.faint = true;
      else if (code === 3) state.italic = true;
      else if (code === 4) state.underline = true;
      else if (code === 21) state.bold = false;
      else if (code === 22) Object.assign(state, { bold: false, faint: false });
      else if (code === 23) state.italic = false;
      else if (code === 24) state.underline = false;
      else if (code === 39) state.fg = null;
      else if (code === 49) state.bg = null;
      else if (code >= 30 && code < 38 || code >= 90 && code < 98) state.fg = String(code);
      else if (code >= 40 && code < 48 || code >= 100 && code < 108) state.bg = String(code);
      else if (code === 38 || code === 48) {
        const mode = params.shift();
        const wanted = mode === "5" ? 1 : mode === "2" ? 3 : 0;
        const taken = params.splice(0, wanted);
        if (wanted > 0 && taken.length === wanted) state[code === 38 ? "fg" : "bg"] = [code, mode, ...taken].join(";");
      }
    }
  }

  // src/lib/outputBuffer.ts
  var nextFrame = (run) => {
    if (typeof requestAnimationFrame === "function") requestAnimationFrame(() => run());
    else setTimeout(run, 16);
  };
  var LIVE_CUT_MARKER = "\n[live output stopped";
  var OutputBuffer = class _OutputBuffer {
    constructor(schedule = nextFrame) {
      this.schedule = schedule;
    }
    schedule;
    lines = [];
    /** The app stopped streaming this run's output (too much of it); the result has its end. */
    cut = false;
    pending = [];
    scheduled = false;
    /** Index of the line each stream is still writing (no newline yet). */
    openLine = { stdout: null, stderr: null };
    /** The colour state each stream's next line starts in (streams are separate pipes). */
    sgr = { stdout: "", stderr: "" };
    listeners = /* @__PURE__ */ new Set();
    static fromResult(output) {
      const buffer = new _OutputBuffer();
      buffer.fold({ stream: "stdout", data: output.stdout });
      buffer.closeLines();
      buffer.fold({ stream: "stderr", data: output.stderr });
      return buffer;
    }
    push(event) {
      this.pending.push(event);
      if (this.scheduled) return;
      this.scheduled = true;
      this.schedule(() => this.flush());
    }
    /** Folds queued chunks in now (also called by the scheduler). */
    flush() {
      this.scheduled = false;
      if (this.pending.length === 0) return;
      const events = this.pending;
      this.pending = [];
      for (const event of events) this.fold(event);
      for (const listen of [...this.listeners]) listen(this.lines.length);
    }
    subscribe(listen) {
      this.listeners.add(listen);
      listen(this.lines.length);
      return () => this.listeners.delete(listen);
    }
    /** All output as plain text, ANSI escapes removed, for copying. */
    text() {
      return this.lines.map((l) => l.text.replace(/\x1b\[[0-9;?]*[ -/]*[@-~]/g, "")).join("\n");
    }
    closeLines() {
      this.openLine = { stdout: null, stderr: null };
    }
    fold({ stream, data }) {
      if (data === "") return;
      if (data.startsWith(LIVE_CUT_MARKER)) this.cut = true;
      const pieces = data.split("\n");
      const tail = pieces.pop() ?? "";
      for (const piece of pieces) {
        const line = this.lines[this.append(stream, piece)];
        this.sgr[stream] = carrySgr(line.sgr, line.text);
        this.openLine[stream] = null;
      }
      if (tail !== "") this.append(stream, tail);
    }
    /** Adds text to the stream's open line (or a new one); returns the line's index. */
    append(stream, text2) {
      const open = this.openLine[stream];
      if (open === null) {
        this.lines.push({ stream, text: text2, sgr: this.sgr[stream] });
        this.openLine[stream] = this.lines.length - 1;
        return this.lines.length - 1;
      }
      const line = this.lines[open];
      this.lines[open] = { ...line, text: line.text + text2 };
      return open;
    }
  };

  // src/lib/agent/preview.ts
  function previewOf(check, path) {
    if (check.preview) {
      const { path: shown, before, after } = check.preview;
      return { kind: "diff", path: shown, before, after };
    }
    if (check.preview_error) {
      const why = `${check.preview_error.code}: ${check.preview_error.message}`;
      return { kind: "unavailable", path: typeof path === "string" ? path : "", reason: why };
    }
    return void 0;
  }

  // src/lib/agent/toolRunner.ts
  var ToolRunner = class {
    constructor(ipc, hooks) {
      this.ipc = ipc;
      this.hooks = hooks;
    }
    ipc;
    hooks;
    /** Live output of exec_shell calls, by card id. */
    outputs = /* @__PURE__ */ new Map();
    pending = /* @__PURE__ */ new Map();
    /** What hooks did to each card's call, both events' together. */
    hookNotes = /* @__PURE__ */ new Map();
    /** Lets go of the live output and hook notes of the conversation left: its cards show what was saved. */
    forget() {
      this.outputs.clear();
      this.hookNotes.clear();
    }
    decide(cardId, decision) {
      this.pending.get(cardId)?.(decision);
    }
    /** One tool_result per tool_use, in order; calls not reached are cancelled. */
    async runAll(uses, control, cardIds, cancel) {
      const results = /* @__PURE__ */ new Map();
      const card = (use) => cardIds.get(use.id) ?? use.id;
      for (const batch of this.batches(uses)) {
        const approved = [];
        for (const use of batch) {
          if (control.cancelled) break;
          const gate = await this.gate(use, card(use), control);
          if (gate.kind === "run") approved.push({ use, input: gate.input, ...gate.consent ? { consent: gate.consent } : {} });
          else if (gate.kind === "result") results.set(use, gate.result);
        }
        if (control.cancelled) break;
        const outputs = await Promise.all(approved.map((a) => this.execute(a, card(a.use), control)));
        approved.forEach((a, i) => results.set(a.use, outputs[i]));
        if (control.cancelled) break;
      }
      return uses.map((use) => results.get(use) ?? cancel(use));
    }
    /** Consecutive read calls form one batch; every other call is its own. */
    batches(uses) {
      const batches = [];
      let reads = [];
      for (const use of uses) {
        if (this.hooks.riskOf(use.name) === "read") {
          reads.push(use);
          continue;
        }
        if (reads.length > 0) batches.push(reads);
        reads = [];
        batches.push([use]);
      }
      if (reads.length > 0) batches.push(reads);
      return batches;
    }
    fail(use, id, error) {
      const wire = toWireError(error);
      this.hooks.updateCard(id, { status: "failed", error: wire });
      return { kind: "result", result: errorBlock(use, wire) };
    }
    async gate(use, id, control) {
      if (this.hooks.riskOf(use.name) === null) {
        return this.fail(use, id, wireError("invalid_input", `There is no tool named \`${use.name}\`.`, "Use one of the tools listed in the system prompt."));
      }
      const inputError = this.hooks.inputError(use.id);
      if (inputError) return this.fail(use, id, inputError);
      const conversation = this.hooks.conversation?.() ?? "";
      const pre = await this.hooks.events?.raise("PreToolUse", { tool: use.name, input: use.input });
      if (pre) this.note(id, notesOf("PreToolUse", pre));
      if (pre?.verdict === "deny") {
        const reason = pre.reason ?? pre.block ?? "a PreToolUse hook refused this call";
        const by = pre.by ?? pre.ran[0];
        this.hooks.updateCard(id, { status: "denied", reason: `Blocked by the hook \`${by}\`: ${reason}` });
        return { kind: "result", result: textBlock(use, `A PreToolUse hook blocked this call: ${reason}`) };
      }
      const input = pre?.updated_input ?? use.input;
      if (pre?.updated_input) this.hooks.updateCard(id, { input, modelInput: use.input });
      let policy;
      try {
        policy = await this.ipc.checkCall(use.name, input, conversation);
      } catch (error) {
        return this.fail(use, id, error);
      }
      if (policy.decision === "deny") {
        const error = wireError("denied", policy.reason, "The permission mode forbids this call; do not retry it.");
        this.hooks.updateCard(id, { status: "denied", reason: policy.reason, error });
        return { kind: "result", result: errorBlock(use, error) };
      }
      const preview = previewOf(policy, use.input.path);
      if (preview) this.hooks.updateCard(id, { preview });
      const ticket = { ticket: policy.ticket };
      if (pre?.verdict === "ask" && policy.decision === "allow") {
        policy = { ...policy, decision: "ask", reason: `The hook \`${pre.by}\` asks: ${pre.reason ?? "approve this call"}` };
      }
      if (pre?.verdict === "allow" && policy.hook_may_answer === true) {
        return { kind: "run", consent: { ...ticket, approval: { scope: "once" } }, input };
      }
      if (policy.decision === "allow") {
        if (policy.rule) this.hooks.updateCard(id, { rule: policy.rule });
        if (policy.grant) this.hooks.updateCard(id, { grant: policy.grant.grant });
        return { kind: "run", consent: ticket, input };
      }
      const choices = grantChoicesOf(policy);
      this.hooks.updateCard(id, {
        status: "waiting",
        reason: policy.reason,
        ...policy.network ? { network: true } : {},
        ...policy.one_at_a_time ? { oneAtATime: true } : {},
        ...policy.proposed_rule ? { proposedRule: policy.proposed_rule } : {},
        ...choices ? { grantChoices: choices } : {},
        ...policy.paths ? { paths: policy.paths } : {},
        ...policy.shown ? { shown: policy.shown } : {}
      });
      const answer = await this.ask(id, control);
      if (answer === "cancelled") return { kind: "cancelled" };
      if (answer === "deny") {
        this.hooks.updateCard(id, { status: "denied", reason: "You denied this call." });
        return { kind: "result", result: textBlock(use, DENIED_TEXT) };
      }
      const network = answer === "network" || policy.network === true;
      const withNetwork = network ? { network } : {};
      let approval;
      if (answer === "once" || answer === "network") approval = { scope: "once", ...withNetwork };
      else if ("grant" in answer) approval = { scope: "conversation", ...withNetwork, grant: answer.grant };
      else approval = { scope: "always", ...withNetwork, rule: answer.rule };
      return { kind: "run", consent: { ...ticket, approval }, input };
    }
    ask(id, control) {
      return new Promise((resolve) => {
        const onCancel = () => {
          this.pending.delete(id);
          resolve("cancelled");
        };
        control.hooks.add(onCancel);
        this.pending.set(id, (answer) => {
          this.pending.delete(id);
          control.hooks.delete(onCancel);
          resolve(answer);
        });
      });
    }
    async execute({ use, consent, input }, id, control) {
      this.hooks.updateCard(id, { status: "running" });
      try {
        const turn = this.hooks.turnId?.();
        const tag = this.hooks.riskOf(use.name) === "read" ? void 0 : { call_id: id, ...turn === void 0 ? {} : { turn_id: turn } };
        const display = this.hooks.displayOf?.(use.name);
        const output = display?.result === "output" ? await this.shell(use, id, consent, control, tag) : display?.server !== void 0 ? await this.stoppable(use, consent, control, tag) : tag ? await this.ipc.callTool(use.name, use.input, consent, tag) : await this.ipc.callTool(use.name, use.input, consent);
        this.hooks.updateCard(id, { status: "done", result: output });
        return await this.afterwards(use, id, input, resultBlock(use, output), output);
      } catch (error) {
        const wire = toWireError(error);
        this.hooks.updateCard(id, { status: wire.code === "cancelled" ? "cancelled" : "failed", error: wire });
        return errorBlock(use, wire);
      } finally {
        if (consent?.approval?.scope === "conversation") this.hooks.granted?.();
      }
    }
    note(id, notes) {
      if (notes.length === 0) return;
      const all = [...this.hookNotes.get(id) ?? [], ...notes];
      this.hookNotes.set(id, all);
      this.hooks.updateCard(id, { hooks: all });
    }
    /**
     * The PostToolUse hooks of a call that ran: what they say (a block's
     * reason, context) goes to the model with the call's result.
     */
    async afterwards(use, id, input, block, output) {
      const post = await this.hooks.events?.raise("PostToolUse", { tool: use.name, input, response: output });
      if (!post) return block;
      this.note(id, notesOf("PostToolUse", post));
      const said = [post.block === void 0 ? null : `A PostToolUse hook says: ${post.block}`, hookContext("PostToolUse", post)].filter((t) => t !== null);
      return said.length === 0 ? block : { ...block, content: `${block.content}

${said.join("\n\n")}` };
    }
    /** A call Stop can end while it runs (an MCP server's tool). */
    async stoppable(use, consent, control, tag) {
      const runId = this.hooks.newId();
      const onCancel = () => void this.ipc.cancel(runId).catch(() => void 0);
      control.hooks.add(onCancel);
      try {
        return await this.ipc.callTool(use.name, use.input, consent, tag, runId);
      } finally {
        control.hooks.delete(onCancel);
      }
    }
    async shell(use, id, consent, control, tag) {
      const runId = this.hooks.newId();
      const buffer = new OutputBuffer(this.hooks.scheduleFrame);
      this.outputs.set(id, buffer);
      this.hooks.updateCard(id, { runId });
      const onCancel = () => void this.ipc.cancel(runId).catch(() => void 0);
      control.hooks.add(onCancel);
      try {
        return await this.ipc.execShell(use.input, consent, runId, (event) => buffer.push(event), tag);
      } finally {
        control.hooks.delete(onCancel);
        buffer.flush();
        this.hooks.updateCard(id, { runId: void 0 });
      }
    }
  };

  // src/lib/agent/assembler.ts
  var StreamAssembler = class {
    blocks = [];
    open = /* @__PURE__ */ new Map();
    /** The model's reasoning, shown but never part of the message. */
    reasoning = "";
    /** Folds one event into the message being built. */
    apply(event) {
      switch (event.type) {
        case "text_delta": {
          const last = this.blocks.at(-1);
          if (last?.type === "text") last.text += event.text;
          else this.blocks.push({ type: "text", text: event.text });
          return;
        }
        case "reasoning_delta":
          this.reasoning += event.text;
          return;
        case "tool_call_start":
          this.open.set(event.id, event.name);
          return;
        case "tool_call_end":
          this.open.delete(event.id);
          this.blocks.push({ type: "tool_use", id: event.id, name: event.name, input: event.input ?? {} });
          return;
        case "tool_call_delta":
        case "usage":
        case "prompt_progress":
        case "retrying":
        case "done":
        case "error":
          return;
      }
    }
    get text() {
      return this.blocks.flatMap((b) => b.type === "text" ? [b.text] : []).join("");
    }
    get toolUses() {
      return this.blocks.filter((b) => b.type === "tool_use");
    }
    /** Ids of calls that started but never ended. */
    get unfinished() {
      return [...this.open.keys()];
    }
    /** The assistant message, or null when the model said nothing usable. */
    message() {
      const content = this.blocks.filter((b) => b.type !== "text" || b.text.trim() !== "");
      return content.length === 0 ? null : { role: "assistant", content };
    }
  };

  // src/lib/agent/turnStream.ts
  async function streamTurn(parts, control, request) {
    const { ipc, board, round, estimate } = parts;
    const runId = parts.newId();
    const assembler = new StreamAssembler();
    const textId = parts.newId();
    round.startTurn();
    board.addItem({ kind: "assistant", id: textId, text: "", streaming: true });
    let stopReason = "";
    let error = null;
    let hook = () => void 0;
    const cancelled = new Promise((resolve) => {
      hook = () => {
        void ipc.cancel(runId).catch(() => void 0);
        resolve();
      };
    });
    control.hooks.add(hook);
    board.patch({ waiting: { since: Date.now() } });
    let reportedInput = 0;
    const onEvent = (event) => {
      if (control.cancelled) return;
      assembler.apply(event);
      if (event.type === "prompt_progress") {
        board.patch({ waiting: { since: board.get().waiting?.since ?? Date.now(), processed: event.processed, total: event.total } });
        return;
      }
      if (event.type !== "retrying" && event.type !== "usage" && board.get().waiting) board.patch({ waiting: null });
      if (event.type !== "retrying" && board.get().retrying) board.patch({ retrying: null });
      switch (event.type) {
        case "text_delta":
          board.updateItem(textId, (item) => ({ ...item, text: assembler.text }));
          return;
        case "reasoning_delta":
          board.updateItem(textId, (item) => ({ ...item, reasoning: assembler.reasoning }));
          return;
        case "tool_call_start":
          round.openCard(event.id, event.name, {});
          return;
        case "tool_call_end":
          if (event.input_error) round.inputErrors.set(event.id, event.input_error);
          round.openCard(event.id, event.name, event.input ?? {});
          return;
        case "usage": {
          reportedInput += event.input_tokens;
          const { usage, price } = board.get();
          board.patch({ usage: addUsage(usage, requestUsage(event, price)) });
          return;
        }
        case "retrying":
          board.patch({ retrying: { attempt: event.attempt, delay_ms: event.delay_ms, error: event.error } });
          return;
        case "done":
          stopReason = event.stop_reason;
          return;
        case "error":
          error = event.error;
          return;
        case "tool_call_delta":
          return;
      }
    };
    request.max_tokens = replyLimit(parts.window(), estimate.tokens(request));
    const stream = ipc.llmStream(runId, request, onEvent).then(
      () => void 0,
      (rejection) => {
        error ??= toWireError(rejection);
      }
    );
    await Promise.race([stream, cancelled]);
    control.hooks.delete(hook);
    board.patch({ waiting: null });
    if (reportedInput > 0) {
      estimate.calibrate(request, reportedInput);
      parts.showMeter(reportedInput);
    } else {
      parts.showMeter(estimate.tokens(request));
    }
    const drop = new Set(assembler.unfinished.flatMap((callId) => round.cardIds.get(callId) ?? []));
    if (error && !control.cancelled) {
      board.removeItems(/* @__PURE__ */ new Set([textId, ...round.cardIds.values()]));
      return { message: null, stopReason, error };
    }
    if (assembler.text.trim() === "" && assembler.reasoning.trim() === "") drop.add(textId);
    else board.updateItem(textId, (item) => ({ ...item, streaming: false }));
    board.removeItems(drop);
    return { message: assembler.message(), stopReason: control.cancelled ? "cancelled" : stopReason, error: null };
  }

  // src/lib/agent/subagents.ts
  var SUBAGENT_MAX_TURNS = 40;
  function everyCard(items) {
    return items.flatMap((item) => item.kind === "tool" ? [item, ...everyCard(item.subagent?.items ?? [])] : []);
  }
  var Subagents = class {
    constructor(parts) {
      this.parts = parts;
    }
    parts;
    /** The runners of subagents running now: an approval answer goes to the one that asked. */
    runners = /* @__PURE__ */ new Set();
    /** The live output of commands subagents ran, by card id, kept after they end. */
    outputs = /* @__PURE__ */ new Map();
    get types() {
      return this.parts.types?.() ?? BUILT_IN_AGENTS;
    }
    /** The `task` tool, whole (a small window offers it as it offers the registry's tools). */
    tool() {
      return taskTool(this.types);
    }
    /** Lets go of the live output of the conversation left. */
    forget() {
      this.outputs.clear();
    }
    /** The live output of a command a subagent ran. */
    outputFor(cardId) {
      for (const runner of this.runners) {
        const output = runner.outputs.get(cardId);
        if (output) return output;
      }
      return this.outputs.get(cardId);
    }
    /** The user's answer to an approval card of a subagent. */
    decide(cardId, decision) {
      for (const runner of this.runners) runner.decide(cardId, decision);
    }
    /**
     * One result per `task` call, in order: consecutive read-only subagents
     * run together, any other alone; calls not reached when Stop came are
     * cancelled.
     */
    async runAll(uses, control, cardIds, cancel) {
      const specs = this.parts.specs() ?? [];
      const results = /* @__PURE__ */ new Map();
      const card = (use) => cardIds.get(use.id) ?? use.id;
      const batches = [];
      let readers = [];
      for (const use of uses) {
        const started = this.started(use);
        if ("error" in started) {
          this.parts.board.updateCard(card(use), { status: "failed", error: started.error });
          results.set(use, errorBlock(use, started.error));
          continue;
        }
        if (isReadOnly(started.type, specs)) {
          readers.push(started);
          continue;
        }
        if (readers.length > 0) batches.push(readers);
        readers = [];
        batches.push([started]);
      }
      if (readers.length > 0) batches.push(readers);
      for (const batch of batches) {
        if (control.cancelled) break;
        const answers = await Promise.all(batch.map((s) => this.run(s, card(s.use), specs, control)));
        batch.forEach((s, i) => results.set(s.use, answers[i]));
      }
      return uses.map((use) => results.get(use) ?? cancel(use));
    }
    /** The call's type and task, or why it cannot start. */
    started(use) {
      const { subagent_type: name, prompt } = use.input;
      const type = this.types.find((t) => t.name === name);
      if (!type) {
        const names = this.types.map((t) => t.name).join(", ");
        return { error: wireError("invalid_input", `There is no subagent type \`${String(name)}\`.`, `Use one of: ${names}.`) };
      }
      if (typeof prompt !== "string" || prompt.trim() === "") {
        return { error: wireError("invalid_input", "The task has no prompt.", "Give the subagent its task in full in `prompt`.") };
      }
      return { use, type, prompt };
    }
    /** Runs one subagent to its answer, showing its work under its card. */
    async run({ use, type, prompt }, cardId, parentSpecs, control) {
      const { ipc, newId, board, projectRoot, window } = this.parts;
      const specs = toolsFor(type, parentSpecs);
      const own = new Board(newId, () => void 0);
      own.patch({ price: board.get().price });
      let counted = noUsage();
      const unsubscribe = own.state.subscribe((state) => {
        const added = usageSince(state.usage, counted);
        counted = state.usage;
        if (isUsed(added)) {
          board.patch({ usage: addUsage(board.get().usage, added) });
        }
        board.updateCard(cardId, { subagent: { type: type.name, items: state.items, usage: state.usage } });
      });
      const outgoing = new Outgoing(projectRoot, window);
      const round = new ToolRound({ ipc, newId, board: own, outgoing, specs: () => specs, window, instructions: this.parts.instructions });
      const runner = new ToolRunner(ipc, {
        newId,
        scheduleFrame: this.parts.scheduleFrame,
        updateCard: (id, change) => own.updateCard(id, change),
        riskOf: (name) => specs.find((s) => s.name === name)?.risk ?? null,
        displayOf: (name) => specs.find((s) => s.name === name)?.display,
        inputError: (callId) => round.inputErrors.get(callId),
        turnId: this.parts.turnId,
        conversation: this.parts.conversation,
        granted: this.parts.granted,
        events: this.parts.events
      });
      this.runners.add(runner);
      board.updateCard(cardId, { status: "running" });
      own.addItem({ kind: "user", id: newId(), text: prompt });
      if (type.model) own.notice(`This subagent asks for the model \`${type.model}\`; it runs on the conversation's model (a subagent's own model is not supported yet).`);
      if (type.unknownTools?.length) own.notice(`Tools its file names that Corral does not have, left out: ${type.unknownTools.join(", ")}.`);
      try {
        const outcome = await this.turns(type, prompt, { own, outgoing, round, runner, specs }, control);
        if (control.cancelled) {
          board.updateCard(cardId, { status: "cancelled", error: wireError("cancelled", "Stopped by the user.") });
          return textBlock(use, CANCELLED_TEXT);
        }
        if ("error" in outcome) {
          board.updateCard(cardId, { status: "failed", error: outcome.error });
          return errorBlock(use, outcome.error);
        }
        board.updateCard(cardId, { status: "done", result: { subagent: type.name, answer: outcome.answer } });
        return { type: "tool_result", tool_use_id: use.id, content: outcome.answer };
      } catch (error) {
        const wire = toWireError(error);
        board.updateCard(cardId, { status: "failed", error: wire });
        return errorBlock(use, wire);
      } finally {
        this.runners.delete(runner);
        for (const [id, output] of runner.outputs) this.outputs.set(id, output);
        unsubscribe();
      }
    }
    /** The subagent's turns, until it answers without calling a tool. */
    async turns(type, prompt, its, control) {
      const { ipc, newId, projectRoot, window } = this.parts;
      const system = subagentPrompt(type, projectRoot);
      const estimate = new TokenEstimate();
      const streamParts = { ipc, newId, board: its.own, round: its.round, estimate, window, showMeter: () => void 0 };
      let messages = [{ role: "user", content: [{ type: "text", text: prompt }] }];
      let answer = "";
      for (let turn = 1; turn <= SUBAGENT_MAX_TURNS && !control.cancelled; turn++) {
        const tools = offeredTools(its.specs, window(), its.outgoing.requestedTools);
        const outcome = await streamTurn(streamParts, control, { system, messages, tools });
        if (outcome.error) return { error: outcome.error };
        if (!outcome.message) break;
        messages = [...messages, outcome.message];
        answer = outcome.message.content.flatMap((b) => b.type === "text" ? [b.text] : []).join("");
        const uses = outcome.message.content.filter((b) => b.type === "tool_use");
        if (uses.length === 0) break;
        if (outcome.stopReason === "max_tokens") {
          messages = [...messages, { role: "user", content: uses.map((u) => its.round.cutOffCard(u)) }];
          continue;
        }
        const content = await its.round.run(uses, its.specs, control, its.runner);
        messages = [...messages, { role: "user", content }];
      }
      if (answer.trim() === "") {
        return { error: wireError("llm_bad_response", "The subagent ended without an answer.", "Start it again with a narrower task, or do the work here.") };
      }
      return { answer };
    }
  };

  // src/lib/sandboxNotice.ts
  function sandboxNotice(result) {
    if (typeof result !== "object" || result === null) return null;
    const { sandbox, sandbox_note: note } = result;
    if (sandbox === void 0 || sandbox === "namespaces") return null;
    const why = typeof note === "string" && note !== "" ? ` (${note})` : "";
    return sandbox === "landlock" ? `Commands run without their full sandbox here${why}. Every command will ask first; only their writes are confined.` : `Commands run with no sandbox here${why}. Every command will ask first.`;
  }

  // src/lib/agent/loop.ts
  var DEFAULT_MAX_TURNS = 100;
  var AgentLoop = class {
    constructor(ipc, options) {
      this.ipc = ipc;
      this.options = options;
      const newId = this.newId = options.newId ?? (() => crypto.randomUUID());
      this.board = new Board(newId, (items) => this.keeping.recordItems(items));
      this.state = this.board.state;
      const window = () => this.facts.contextWindow.window;
      this.outgoing = new Outgoing(options.projectRoot, window, () => [this.subagents.tool()]);
      this.facts = new ModelFacts(ipc, this.estimate, {
        specs: () => this.specs,
        prefix: (specs) => this.outgoing.prefix(specs),
        onModel: (model) => this.board.patch({ price: model.price ?? null }),
        countWaitMs: options.countWaitMs
      });
      this.fitter = new ContextFitter(ipc, newId, this.outgoing, this.facts, this.estimate, this.board, async (trigger) => {
        await this.hooks.raise("PreCompact", { trigger });
      });
      const showMeter = (used) => this.fitter.showMeter(used);
      const instructions = options.instructions ?? PROJECT_INSTRUCTIONS;
      this.hooks = new LoopHooks(ipc, () => this.keeping.journal.conversation ?? this.grants.conversation, (text2) => this.board.notice(text2));
      this.grants = new GrantList(ipc, () => crypto.randomUUID(), (grants) => this.board.patch({ grants }));
      this.subagents = new Subagents({
        ipc,
        newId,
        board: this.board,
        projectRoot: options.projectRoot,
        specs: () => this.specs,
        window,
        instructions,
        types: () => this.agentTypes,
        turnId: () => this.turnId,
        conversation: () => this.grants.conversation,
        granted: () => void this.grants.refresh(),
        scheduleFrame: options.scheduleFrame,
        events: this.hooks
      });
      const subagents = this.subagents;
      this.round = new ToolRound({ ipc, newId, board: this.board, outgoing: this.outgoing, specs: () => this.specs, window, instructions, subagents });
      this.tools = new ToolRunner(ipc, {
        newId,
        scheduleFrame: options.scheduleFrame,
        updateCard: (id, change) => {
          this.board.updateCard(id, change);
          this.noteSandbox(change.result);
        },
        riskOf: (name) => this.specs?.find((s) => s.name === name)?.risk ?? null,
        displayOf: (name) => this.specs?.find((s) => s.name === name)?.display,
        inputError: (callId) => this.round.inputErrors.get(callId),
        turnId: () => this.turnId,
        conversation: () => this.grants.conversation,
        granted: () => void this.grants.refresh(),
        events: this.hooks
      });
      this.streamParts = { ipc, newId, board: this.board, round: this.round, estimate: this.estimate, window, showMeter };
      this.keeping = new Keeping(ipc, newId, this.board, {
        onAppended: options.onAppended,
        resume: (opened) => this.outgoing.resume(opened),
        whole: (entries) => this.outgoing.pastes = PasteShelf.fromEntries(entries),
        estimate: (journal) => {
          if (this.specs && this.facts.model !== void 0) this.estimateShown();
          else void this.estimateOpened(journal);
        }
      });
      if (options.conversation) this.load(options.conversation);
    }
    ipc;
    options;
    state;
    board;
    outgoing;
    facts;
    fitter;
    round;
    keeping;
    streamParts;
    specs = null;
    control = null;
    estimate = new TokenEstimate();
    tools;
    subagents;
    /** The subagent types, found again at the start of each run. */
    agentTypes = BUILT_IN_AGENTS;
    newId;
    /** The conversation's key and what the user allowed in it. */
    grants;
    /** The user message being answered: checkpoints are taken in its name. */
    turnId;
    /** Whether it was said that commands ran without the namespaces (once). */
    sandboxNoted = false;
    /** The project's hooks, raised at the loop's events. */
    hooks;
    /** Whether SessionStart was raised for the conversation shown. */
    sessionStarted = false;
    /** The window's key of the conversation shown (its grants and answers about domains). */
    get conversationKey() {
      return this.grants.conversation;
    }
    /** The conversation's id in the history; null until its first entry is stored. */
    get conversationId() {
      return this.keeping.journal.conversation;
    }
    /**
     * Where a fork from the user message `itemId` cuts: "edit" keeps what came
     * before the message, "here" also the message and the work it started (up
     * to the next message of the user). Null until the message is stored.
     */
    forkPoint(itemId, mode) {
      return this.keeping.forkPoint(itemId, mode);
    }
    /**
     * Stores what is still unsaved, of this conversation and of those left,
     * before another is opened; resolves once each is stored or has failed
     * again (nothing is dropped: a failure is tried again later).
     */
    saveAll() {
      return this.keeping.saveAll();
    }
    /** Entries recorded in this loop and not stored yet, in every conversation. */
    get unsaved() {
      return this.keeping.unsaved;
    }
    /** Why the conversation shown has entries not stored (its last append's error), while it has. */
    get saveError() {
      return this.keeping.saveError;
    }
    /** The project folder the tools resolve paths against. */
    get projectRoot() {
      return this.options.projectRoot;
    }
    /** The provider transcript, as the next request would send it. */
    get transcript() {
      return this.outgoing.messages;
    }
    /**
     * Goes on with a conversation from the history (the loop must be idle).
     * It may come brief (long tool results left out) or in part (its last
     * entries, fewer than `summary.entries`): it is shown at once, and its
     * whole is fetched behind; nothing is sent until that is in.
     */
    load(conversation) {
      if (this.control) return;
      const opened = fromEntries(conversation.entries);
      this.forgetOutputs();
      this.outgoing.restart(PasteShelf.fromEntries(conversation.entries));
      this.outgoing.resume(opened);
      this.round.foldersSeen = /* @__PURE__ */ new Set();
      this.board.set({ ...emptyState(), items: opened.items, usage: usageOfSummary(conversation.summary) });
      this.grants.restart();
      this.sessionStarted = false;
      const partial = this.keeping.open(conversation, opened);
      if (!partial) void this.estimateOpened(this.keeping.journal);
    }
    /**
     * Resolves once the conversation shown is whole (at once when it was
     * opened whole); a failed fetch resolves it too (tried again on send).
     */
    loaded() {
      return this.keeping.loaded();
    }
    /**
     * Sends the person's message: its text and the images pasted or dropped
     * with it. When the model refuses the images (`images_unsupported`), the
     * message is taken back (see `withdraw`) and offered to the composer
     * again as `returned`, so nothing typed or attached is lost; so is a
     * message that is not sent at all (a run is on, the rest of a
     * conversation opened in part could not be had, or its images are over
     * the limits).
     */
    async send(text2, images = []) {
      if (text2.trim() === "" && images.length === 0) return;
      if (this.control || !await this.keeping.ready() || this.control) {
        this.board.patch({ returned: { text: text2, images } });
        return;
      }
      const over = this.outgoing.imagesOverLimit(images.length);
      if (over) {
        this.board.patch({ error: over, returned: { text: text2, images } });
        return;
      }
      const shelved = await this.shelvePaste(await expandMessage(this.ipc, text2, this.options.commands));
      const sentText = shelved.text;
      if (this.control) {
        this.board.patch({ returned: { text: text2, images } });
        return;
      }
      const context = await this.promptHooks(sentText);
      if (context === null || this.control) {
        this.board.patch({ returned: { text: text2, images } });
        return;
      }
      const said = context.map((c) => ({ type: "text", text: c }));
      const content = [...text2.trim() === "" ? [] : [{ type: "text", text: sentText }], ...images, ...said];
      this.outgoing.messages = appendUserContent(this.outgoing.messages, content);
      const sent = this.outgoing.messages.at(-1);
      this.outgoing.freshImages = new Set(images);
      const turn = this.newId();
      this.turnId = turn;
      this.board.patch({ returned: null });
      this.board.addItem({ kind: "user", id: turn, text: text2, ...images.length > 0 ? { images } : {}, ...shelved.cut ? { cut: shelved.cut } : {} });
      this.keeping.record({ role: "user", content });
      await this.run();
      const error = this.board.get().error;
      if (images.length > 0 && error?.details?.reason === "images_unsupported" && this.turnId === turn) this.withdraw(turn, sent, content.length, text2, images);
    }
    /**
     * SessionStart (at a conversation's first message here) and
     * UserPromptSubmit: the context they add for the model, or null when a
     * hook blocked the prompt (it is not sent, and the user is told why).
     */
    async promptHooks(prompt) {
      await this.hooks.refresh();
      const context = [];
      if (!this.sessionStarted) {
        this.sessionStarted = true;
        const trigger = this.keeping.journal.conversation ? "resume" : "startup";
        const started = await this.hooks.raise("SessionStart", { trigger });
        const added2 = hookContext("SessionStart", started);
        if (added2) {
          context.push(added2);
          this.board.notice("The SessionStart hooks added context for the agent.", added2);
        }
      }
      const submitted = await this.hooks.raise("UserPromptSubmit", { prompt });
      const blocked = submitted && blockedBy(submitted);
      if (blocked) {
        this.board.notice(`The hook \`${blocked.by}\` blocked this message: ${blocked.reason}`);
        return null;
      }
      const added = hookContext("UserPromptSubmit", submitted);
      if (added) {
        context.push(added);
        this.board.notice("The UserPromptSubmit hooks added context for the agent.", added);
      }
      return context;
    }
    /**
     * The person's text as the model is sent it: a part and a note when it is
     * larger than its share of the window (with how much of it the model gets).
     */
    async shelvePaste(text2) {
      try {
        this.specs ??= await this.ipc.toolSpecs();
        await this.facts.ask();
      } catch {
        return { text: text2, cut: null };
      }
      return this.outgoing.pastes.shelve(text2, this.fitter.resultShare(this.specs));
    }
    /**
     * Takes back the user's last message, which the model refused for its
     * images: its blocks leave the transcript, its item the window (stored
     * again as `withdrawn`, so the conversation opened again leaves it out
     * too), and its text and images go back to the composer. Only while
     * `sent`, the message `send` appended (or merged the blocks into), is
     * still the last: after a tool round in the same turn the last user
     * message holds tool results, and cutting it would corrupt the
     * transcript, so the error is only shown.
     */
    withdraw(turn, sent, blocks, text2, images) {
      const messages = this.outgoing.messages;
      const last = messages.at(-1);
      const item = this.board.get().items.find((i) => i.id === turn);
      if (sent === void 0 || last !== sent || item?.kind !== "user") return;
      const kept = last.content.slice(0, Math.max(0, last.content.length - blocks));
      this.outgoing.messages = kept.length > 0 ? [...messages.slice(0, -1), { role: "user", content: kept }] : messages.slice(0, -1);
      this.board.removeItems(/* @__PURE__ */ new Set([turn]));
      this.keeping.journal.recordItems([{ kind: "user", id: turn, text: "", withdrawn: true }]);
      this.turnId = void 0;
      this.board.patch({ returned: { text: text2, images } });
    }
    /** Re-sends the last turn after a provider failure; the conversation is kept. */
    async retry() {
      if (this.control || !await this.keeping.ready()) return;
      if (this.control || this.outgoing.messages.at(-1)?.role !== "user") return;
      await this.run();
    }
    /** Goes on after the run paused at its turn budget. */
    async continue() {
      await this.retry();
    }
    /** Forgets what is known of the model (the settings changed). */
    resetModel() {
      this.facts.reset();
      this.outgoing.imagesRefused = false;
    }
    /**
     * The settings changed: forgets the model, asks the server about the new
     * one and shows the meter against its window at once (when idle).
     */
    async refreshModel() {
      this.resetModel();
      if (this.control) return;
      try {
        this.specs ??= await this.ipc.toolSpecs();
        await this.facts.ask();
      } catch {
        return;
      }
      this.estimateShown();
    }
    /** Summarizes the older part of the conversation now (the Compact button). */
    async compact() {
      if (this.control || !await this.keeping.ready() || this.control) return;
      const control = { cancelled: false, hooks: /* @__PURE__ */ new Set() };
      this.control = control;
      this.board.patch({ busy: true });
      try {
        await this.hooks.refresh();
        await this.fitter.compact(control, true, "manual");
      } finally {
        if (control.cancelled) this.board.notice("Stopped.");
        this.control = null;
        this.board.patch({ busy: false });
        this.estimateShown();
        await this.keeping.save();
      }
    }
    stop() {
      const control = this.control;
      if (!control || control.cancelled) return;
      control.cancelled = true;
      for (const hook of [...control.hooks]) hook();
    }
    dismissError() {
      this.board.patch({ error: null });
    }
    /** Starts a new conversation; the one shown stays in the history as it is. */
    async clear() {
      if (this.control) return;
      await this.keeping.leaveForNew();
      this.forgetOutputs();
      this.outgoing.restart();
      this.round.foldersSeen = /* @__PURE__ */ new Set();
      this.board.set(emptyState());
      this.grants.restart();
      this.keeping.startNew();
      this.sessionStarted = false;
    }
    /**
     * The conversation left: its commands' live output goes (its cards
     * show the results saved with them), or a long session would keep
     * every command's output it ever ran.
     */
    forgetOutputs() {
      this.tools.forget();
      this.subagents.forget();
    }
    /** The key under which Rust holds what the user allowed in this conversation. */
    get grantsKey() {
      return this.grants.conversation;
    }
    /** Revokes one thing the user allowed in this conversation. */
    revokeGrant(id) {
      return this.grants.revoke(id);
    }
    /** The user's answer to an approval card. */
    decide(cardId, decision) {
      this.tools.decide(cardId, decision);
      this.subagents.decide(cardId, decision);
    }
    /** Stops one running command; the loop goes on with its partial output. */
    stopCommand(cardId) {
      const card = everyCard(this.board.get().items).find((i) => i.id === cardId);
      if (card?.runId) void this.ipc.cancel(card.runId).catch(() => void 0);
    }
    outputFor(cardId) {
      return this.tools.outputs.get(cardId) ?? this.subagents.outputFor(cardId);
    }
    async run() {
      const control = { cancelled: false, hooks: /* @__PURE__ */ new Set() };
      this.control = control;
      this.board.patch({ busy: true, error: null, retrying: null, turnLimitReached: false });
      const maxTurns = this.options.maxTurns ?? DEFAULT_MAX_TURNS;
      const out = this.outgoing;
      let overflowRetried = false;
      let stopHookActive = false;
      this.fitter.newTurn();
      try {
        await this.hooks.refresh();
        this.specs = await this.ipc.toolSpecs();
        const known = this.specs.map((spec) => spec.name);
        this.agentTypes = await (this.options.agents ?? builtInAgents)(this.ipc, known).catch(() => BUILT_IN_AGENTS);
        await this.loadModelFacts();
        for (let turn = 1; ; turn++) {
          const unfit = await this.fitter.fit(control, this.specs);
          this.round.noteCuts(out.messages.at(-1));
          if (unfit) {
            this.board.patch({ error: unfit });
            break;
          }
          if (control.cancelled) break;
          const outcome = await streamTurn(this.streamParts, control, out.request(this.specs));
          if (outcome.error && isContextOverflow(outcome.error) && !overflowRetried && !control.cancelled) {
            overflowRetried = true;
            const unfit2 = this.fitter.noteOverflow(outcome.error, this.specs);
            if (unfit2) {
              this.board.patch({ error: unfit2 });
              break;
            }
            if (this.fitter.squeeze() || await this.fitter.compact(control, true)) {
              turn--;
              continue;
            }
          }
          if (outcome.error && out.refusesEarlierImages(outcome.error) && !control.cancelled) {
            out.imagesRefused = true;
            this.board.notice("This model takes no images: the conversation's earlier images are left out of what it is sent from now on. They stay in the conversation.");
            turn--;
            continue;
          }
          if (outcome.error) {
            this.board.patch({ error: outcome.error });
            break;
          }
          if (outcome.message) {
            out.messages = [...out.messages, outcome.message];
            this.keeping.record(outcome.message);
          }
          const uses = outcome.message?.content.filter((b) => b.type === "tool_use") ?? [];
          if (uses.length > 0 && outcome.stopReason === "max_tokens") {
            out.messages = [...out.messages, { role: "user", content: uses.map((use) => this.round.cutOffCard(use)) }];
            this.keeping.record(out.messages[out.messages.length - 1]);
            this.board.notice(
              `The reply was cut off at its token limit; its ${uses.length === 1 ? "tool call was" : `${uses.length} tool calls were`} not run. Send a message to let the agent try again.`
            );
            break;
          }
          if (uses.length === 0) {
            if (outcome.stopReason === "max_tokens") this.board.notice("The reply hit the max tokens limit and was cut off.");
            else if (!control.cancelled && !outcome.message) this.board.notice("The model sent an empty reply.");
            if (control.cancelled || !await this.stopHooks(stopHookActive)) break;
            stopHookActive = true;
            if (turn >= maxTurns) {
              this.board.notice(`Paused after ${maxTurns} model turns. Continue to let the agent go on.`);
              this.board.patch({ turnLimitReached: true });
              break;
            }
            continue;
          }
          const content = await this.round.run(uses, this.specs, control, this.tools);
          out.messages = [...out.messages, { role: "user", content }];
          this.keeping.record({ role: "user", content });
          if (control.cancelled) break;
          await this.keeping.save();
          if (turn >= maxTurns) {
            this.board.notice(`Paused after ${maxTurns} model turns. Continue to let the agent go on.`);
            this.board.patch({ turnLimitReached: true });
            break;
          }
        }
      } catch (error) {
        this.board.patch({ error: toWireError(error) });
      } finally {
        if (control.cancelled) this.board.notice("Stopped.");
        this.control = null;
        this.board.patch({ busy: false, retrying: null });
        if (control.cancelled) this.estimateShown();
        await this.keeping.save();
      }
    }
    /**
     * The Stop hooks, as the model ends its turn: true when one blocked, and
     * the model was given its reason to go on with.
     */
    async stopHooks(active) {
      const said = await this.hooks.raise("Stop", { stop_hook_active: active });
      const blocked = said?.block === void 0 ? null : blockedBy(said);
      if (!blocked) return false;
      this.board.notice(`The hook \`${blocked.by}\` kept the agent going: ${blocked.reason}`);
      const text2 = `A Stop hook says the work is not done: ${blocked.reason}`;
      this.outgoing.messages = appendUserContent(this.outgoing.messages, [{ type: "text", text: text2 }]);
      this.keeping.record(this.outgoing.messages[this.outgoing.messages.length - 1]);
      return true;
    }
    /**
     * The meter of a conversation opened: the size of the request its next
     * message would send, estimated as before a send (without the project's
     * instructions, read at that send). Nothing is sent.
     */
    async estimateOpened(journal) {
      try {
        this.specs ??= await this.ipc.toolSpecs();
        await this.facts.ask();
      } catch {
        return;
      }
      if (this.keeping.journal !== journal) return;
      this.board.patch({ price: this.facts.model?.price ?? null });
      this.estimateShown();
    }
    /** Shows the next request's estimated size, when idle and the tools are known. */
    estimateShown() {
      if (this.control || !this.specs || this.facts.model === void 0) return;
      this.fitter.showMeter(this.estimate.tokens(this.outgoing.request(this.specs)));
    }
    /** The model's context window, the project's instructions and the skills, once per conversation. */
    async loadModelFacts() {
      const model = await this.facts.ask();
      if (!this.facts.noted) {
        this.facts.noted = true;
        if (model.supports_tools === false) {
          this.board.notice(
            "The server says this model's chat template cannot call tools, so the agent can only talk. Give the server a template that can (llama.cpp: --jinja, and --chat-template-file with one that supports tools when the model's own does not), or pick another model."
          );
        }
      }
      this.outgoing.skills ??= skillsOf(await this.ipc.customization().catch(() => ({ skills: [] })));
      if (this.outgoing.instructions === void 0) {
        this.outgoing.instructions = await (this.options.instructions ?? PROJECT_INSTRUCTIONS).root(this.ipc);
        const found = this.outgoing.instructions;
        const shown = found && this.board.get().items.some((item) => item.kind === "notice" && item.text === found.notice && item.detail === found.text);
        if (found && !shown) this.board.notice(found.notice, found.text);
      }
    }
    /** Says once per conversation that commands ran without the namespaces. */
    noteSandbox(result) {
      const text2 = this.sandboxNoted ? null : sandboxNotice(result);
      if (text2 === null) return;
      this.sandboxNoted = true;
      this.board.notice(text2);
    }
  };

  // src/lib/plan.ts
  function planOf(result) {
    if (typeof result !== "object" || result === null) return null;
    const steps = result.steps;
    if (!Array.isArray(steps)) return null;
    const valid = steps.filter(
      (s) => typeof s === "object" && s !== null && typeof s.step === "string" && ["pending", "in_progress", "completed"].includes(s.status)
    );
    return { steps: valid, completed: valid.filter((s) => s.status === "completed").length, total: valid.length };
  }

  // src/exec/acpUpdates.ts
  function kindOf(card) {
    switch (card.display?.result) {
      case "file_content":
        return "read";
      case "written":
      case "edited":
        return "edit";
      case "deleted":
        return "delete";
      case "entries":
      case "files":
      case "matches":
      case "diagnostics":
        return "search";
      case "output":
        return "execute";
      case "plan":
        return "think";
      case "page":
        return "fetch";
      default:
        return card.network ? "fetch" : "other";
    }
  }
  function titleOf(card) {
    const { path, command, args, query, pattern, url } = card.input;
    if (typeof command === "string") return [command, ...Array.isArray(args) ? args.map(String) : []].join(" ");
    const about = [path, query, pattern, url].find((v) => typeof v === "string");
    return about === void 0 ? card.name : `${card.name} ${String(about)}`;
  }
  var text = (value) => ({ type: "content", content: { type: "text", text: value } });
  var UpdateTracker = class {
    constructor(send, root, seen) {
      this.send = send;
      this.root = root;
      for (const item of seen) {
        if (item.kind === "assistant") {
          this.text.set(item.id, item.text);
          this.thought.set(item.id, item.reasoning ?? "");
        } else if (item.kind === "tool") this.tools.set(item.id, item.status);
        else if (item.kind === "user") this.users.add(item.id);
      }
    }
    send;
    root;
    text = /* @__PURE__ */ new Map();
    thought = /* @__PURE__ */ new Map();
    tools = /* @__PURE__ */ new Map();
    users = /* @__PURE__ */ new Set();
    /** Marks the user messages in `state` as told: a prompt's own text is the client's already. */
    skipUsers(state) {
      for (const item of state.items) if (item.kind === "user") this.users.add(item.id);
    }
    update(state) {
      for (const item of state.items) {
        if (item.kind === "user" && !this.users.has(item.id)) {
          this.users.add(item.id);
          if (!item.withdrawn) this.send({ sessionUpdate: "user_message_chunk", content: { type: "text", text: item.text } });
        } else if (item.kind === "assistant") {
          const thought = this.thought.get(item.id) ?? "";
          const reasoning = item.reasoning ?? "";
          if (reasoning !== thought && reasoning.startsWith(thought)) {
            this.send({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: reasoning.slice(thought.length) } });
          }
          this.thought.set(item.id, reasoning);
          const before = this.text.get(item.id) ?? "";
          if (item.text !== before && item.text.startsWith(before)) {
            this.send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: item.text.slice(before.length) } });
          }
          this.text.set(item.id, item.text);
        } else if (item.kind === "tool") {
          this.tool(item);
          for (const inner of item.subagent?.items ?? []) if (inner.kind === "tool") this.tool(inner);
        }
      }
    }
    /** The call as ACP's ToolCall: what a permission request shows too. */
    toolCall(card) {
      const paths = card.paths?.map((p) => this.absolute(p.inside)) ?? [];
      const path = card.input.path;
      if (paths.length === 0 && typeof path === "string") paths.push(this.absolute(path));
      return {
        toolCallId: card.id,
        title: titleOf(card),
        kind: kindOf(card),
        status: "pending",
        rawInput: card.input,
        locations: paths.map((p) => ({ path: p })),
        content: this.diff(card)
      };
    }
    tool(card) {
      const before = this.tools.get(card.id);
      if (before === card.status) return;
      this.tools.set(card.id, card.status);
      if ((before === void 0 || before === "queued") && card.status !== "queued") {
        this.send({ sessionUpdate: "tool_call", ...this.toolCall(card) });
      }
      if (card.status === "running") {
        this.send({ sessionUpdate: "tool_call_update", toolCallId: card.id, status: "in_progress" });
      } else if (isTerminal(card.status)) {
        const done = card.status === "done";
        const why = card.error?.message ?? card.reason ?? card.status;
        this.send({
          sessionUpdate: "tool_call_update",
          toolCallId: card.id,
          status: done ? "completed" : "failed",
          content: done ? this.diff(card) : [text(card.status === "cancelled" ? "Cancelled." : why)],
          ...card.result === void 0 ? {} : { rawOutput: card.result }
        });
        const plan = done && card.display?.result === "plan" ? planOf(card.result) : null;
        if (plan) {
          this.send({
            sessionUpdate: "plan",
            entries: plan.steps.map((step) => ({ content: step.step, priority: "medium", status: step.status }))
          });
        }
      }
    }
    /** The change of an edit, as Rust computed it when it checked the call. */
    diff(card) {
      const preview = card.preview;
      if (preview?.kind !== "diff") return [];
      return [{ type: "diff", path: this.absolute(preview.path), oldText: preview.before === "" ? null : preview.before, newText: preview.after }];
    }
    absolute(path) {
      if (path.startsWith("/")) return path;
      const inside = path.replace(/^\.\/?/, "");
      return inside === "" ? this.root : `${this.root.replace(/\/$/, "")}/${inside}`;
    }
  };

  // src/lib/agent/agentIpc.ts
  function agentIpc(transport) {
    const call = transport.call.bind(transport);
    function runTool(name, input, consent, run, onOutput) {
      if (consent?.ticket !== void 0) {
        const approval = consent.approval === void 0 ? {} : { approval: consent.approval };
        return call("run_call", { ticket: consent.ticket, ...approval, ...run }, onOutput);
      }
      const conversation = consent?.conversation === void 0 ? {} : { conversation: consent.conversation };
      return call("call_tool", { name, input, ...conversation, ...run }, onOutput);
    }
    return {
      // Policy and grants
      toolSpecs: () => call("tool_specs", {}),
      /**
       * Checks a call and has Rust keep it as a ticket (run it with `callTool`
       * and `{ ticket }`). `conversation`: the window's key of the
       * conversation; a grant of it may make the call `allow`.
       */
      checkCall: (tool, input, conversation) => call("check_call", { tool, input, ...conversation === void 0 ? {} : { conversation } }),
      /** What the user allowed in the conversation, oldest first. */
      conversationGrants: (conversation) => call("conversation_grants", { conversation }),
      /** Revokes one; resolves to those left. */
      revokeGrant: (conversation, id) => call("revoke_grant", { conversation, id }),
      /** The window left the conversation: its grants end. */
      endConversation: (conversation) => call("end_conversation", { conversation }),
      // Tools: a checked call runs by its ticket (run_call); the window's own
      // reads are checked and run in one (call_tool). The model's input object
      // passes straight through.
      // `tag` names the user turn and the card of a call that can change the
      // project: the checkpoint taken before it carries them.
      // `runId`: `cancel(runId)` stops the call (an MCP server's tool).
      callTool: (name, input, consent, tag, runId) => runTool(name, input, consent, { ...tag, ...runId === void 0 ? {} : { run_id: runId } }),
      /** A command, its output handed to `onOutput` as it comes. */
      execShell: (input, consent, runId, onOutput, tag) => runTool("exec_shell", input, consent, { run_id: runId, ...tag }, onOutput),
      // Hooks
      hookStatus: () => call("hook_status", {}),
      runHooks: (request) => call("run_hooks", { request }),
      // Custom commands and skills
      /** The project's and the user's custom commands and skills, each file's text whole. */
      customization: () => call("customization", {}),
      /** A file of a listed skill's folder (its SKILL.md without `file`). */
      skillFile: (source, folder, file) => call("skill_file", { source, folder, ...file === void 0 ? {} : { file } }),
      // LLM
      /**
       * A turn streamed to `target` (the conversation's model, see
       * ModelSwitcher) when given, else as the settings say. Resolves once
       * the stream's terminal event (`done` or `error`) has arrived, not when
       * the command answers: in the window a channel message over about 8 KB
       * (a tool call's long arguments) travels apart from the command's
       * answer and can arrive after it, and a turn ended early would drop it.
       * The command answers Ok only after sending its terminal event (exec's
       * host hands every event over before the answer).
       */
      llmStream: async (runId, request, onEvent, target) => {
        let ended = () => void 0;
        const terminal = new Promise((resolve) => ended = resolve);
        const answer = await call("llm_stream", { run_id: runId, request, ...target ? { target } : {} }, (event) => {
          if (event.type === "done" || event.type === "error") ended();
          onEvent(event);
        });
        await terminal;
        return answer;
      },
      cancel: (runId) => call("cancel", { run_id: runId }),
      /** What is known of the model of `settings`, else of the saved settings. */
      modelInfo: (settings) => call("model_info", settings ? { settings } : {}),
      /** The server's own count of `request`'s tokens (llama.cpp), at `target` when given; null when it cannot count. */
      countPromptTokens: (request, target) => call("count_prompt_tokens", { request, ...target ? { target } : {} }),
      // Conversations (kept by Rust; see docs/ipc.md)
      /**
       * The conversation's entries, oldest first; `part` may ask for fewer
       * (`summary.entries` counts them all): with `elideOver`, tool results
       * longer than that many bytes are left out (see `elided`); with
       * `beforeSeq`, only the entries before that one; with `last`, only the
       * newest that many of them.
       */
      openConversation: (id, part = {}) => call("open_conversation", {
        id,
        ...part.elideOver === void 0 ? {} : { elide_over: part.elideOver },
        ...part.beforeSeq === void 0 ? {} : { before_seq: part.beforeSeq },
        ...part.last === void 0 ? {} : { last: part.last }
      }),
      appendEntry: (conversation, entry) => call("append_entry", { ...conversation === null ? {} : { conversation }, entry })
    };
  }

  // src/exec/host.ts
  function hostTransport(host2) {
    return {
      async call(command, args, onEvent) {
        const forward = onEvent && ((event) => onEvent(JSON.parse(event)));
        const answer = JSON.parse(await host2.invoke(command, JSON.stringify(args), forward));
        if ("err" in answer) throw toWireError(answer.err);
        return answer.ok;
      }
    };
  }
  function hostIpc(host2) {
    return agentIpc(hostTransport(host2));
  }

  // src/exec/acp.ts
  async function runAcp(host2, request) {
    const ipc = hostIpc(host2);
    const conversation = request.resume === null ? null : await ipc.openConversation(request.resume);
    const loop = new AgentLoop(ipc, { projectRoot: request.root, conversation, agents: projectAgents });
    if (conversation) await loop.loaded();
    const send = (update) => host2.emit(JSON.stringify(update));
    if (request.prompt === null) {
      new UpdateTracker(send, request.root, []).update(loop.state.get());
      return JSON.stringify({ stopReason: "end_turn", conversation: request.resume });
    }
    const tracker = new UpdateTracker(send, request.root, loop.state.get().items);
    let cancelled = false;
    void host2.invoke("wait_stop", "{}").then(() => {
      cancelled = true;
      loop.stop();
    });
    const asked = /* @__PURE__ */ new Set();
    const ask = async (card) => {
      const exact = card.grantChoices?.exact_grant;
      const question = { toolCall: tracker.toolCall(card), network: card.network === true, grant: exact !== void 0 };
      const raw = JSON.parse(await host2.invoke("ask_approval", JSON.stringify(question)));
      const choice = "ok" in raw ? raw.ok.decision : "deny";
      const decision = choice === "grant" && exact ? { grant: exact } : choice === "cancelled" || choice === "grant" ? "deny" : choice;
      loop.decide(card.id, decision);
      if (choice === "cancelled") {
        cancelled = true;
        loop.stop();
      }
    };
    const unsubscribe = loop.state.subscribe((state2) => {
      tracker.skipUsers(state2);
      tracker.update(state2);
      for (const item of everyCard(state2.items)) {
        if (item.status === "waiting" && !asked.has(item.id)) {
          asked.add(item.id);
          void ask(item);
        }
      }
    });
    await loop.send(request.prompt);
    await loop.saveAll();
    unsubscribe();
    const state = loop.state.get();
    send(usageUpdate(state));
    const answer = cancelled ? { stopReason: "cancelled", conversation: loop.conversationId } : state.error ? { stopReason: "error", conversation: loop.conversationId, error: state.error } : { stopReason: state.turnLimitReached ? "max_turn_requests" : "end_turn", conversation: loop.conversationId };
    return JSON.stringify(answer);
  }
  function usageUpdate(state) {
    const cost = state.usage.unpriced === 0 ? { cost: { amount: state.usage.cost_usd, currency: "USD" } } : {};
    return { sessionUpdate: "usage_update", used: state.context?.used ?? 0, size: state.context?.window ?? 0, ...cost };
  }

  // src/exec/events.ts
  function runUsage(usage) {
    const { input_tokens, output_tokens, cache_read_tokens, cache_write_tokens } = usage;
    return { input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd: usage.unpriced > 0 ? null : usage.cost_usd };
  }
  var EventTracker = class {
    constructor(emit, onWaiting, seen) {
      this.emit = emit;
      this.onWaiting = onWaiting;
      for (const item of seen.items) {
        if ((item.kind === "tool" || item.kind === "user") && item.cut) this.cuts.set(item.id, `${item.cut.received}/${item.cut.total}`);
        if (item.kind === "assistant") {
          this.text.set(item.id, item.text);
          this.reasoning.set(item.id, item.reasoning ?? "");
        } else if (item.kind === "tool") this.tools.set(item.id, item.status);
        else if (item.kind === "notice") this.notices.add(item.id);
      }
      this.error = seen.error;
    }
    emit;
    onWaiting;
    text = /* @__PURE__ */ new Map();
    reasoning = /* @__PURE__ */ new Map();
    tools = /* @__PURE__ */ new Map();
    notices = /* @__PURE__ */ new Set();
    /** The cuts told, by item id, as "received/total". */
    cuts = /* @__PURE__ */ new Map();
    error = null;
    update(state) {
      for (const item of state.items) {
        if (item.kind === "user" && item.cut) this.cut(item.id, item.cut);
        if (item.kind === "assistant") {
          const thought = this.reasoning.get(item.id) ?? "";
          const reasoning = item.reasoning ?? "";
          if (reasoning !== thought && reasoning.startsWith(thought)) {
            this.emit({ type: "reasoning_delta", id: item.id, text: reasoning.slice(thought.length) });
          }
          this.reasoning.set(item.id, reasoning);
          const before = this.text.get(item.id) ?? "";
          if (item.text !== before && item.text.startsWith(before)) {
            this.emit({ type: "text_delta", id: item.id, text: item.text.slice(before.length) });
          }
          this.text.set(item.id, item.text);
        } else if (item.kind === "notice" && !this.notices.has(item.id)) {
          this.notices.add(item.id);
          this.emit({ type: "notice", text: item.text });
        } else if (item.kind === "tool") {
          this.tool(item);
          for (const inner of item.subagent?.items ?? []) if (inner.kind === "tool") this.tool(inner);
        }
      }
      if (state.error && state.error !== this.error) this.emit({ type: "error", error: state.error });
      this.error = state.error;
    }
    /** A result or a message cut to fit the model's window: what the model received of it, told once (again if it changes). */
    cut(id, cut3, name) {
      const figures = `${cut3.received}/${cut3.total}`;
      if (this.cuts.get(id) === figures) return;
      this.cuts.set(id, figures);
      this.emit({ type: "cut", id, ...name === void 0 ? {} : { name }, received: cut3.received, total: cut3.total, rest: cut3.rest });
    }
    tool(card) {
      if (card.cut && isTerminal(card.status)) this.cut(card.id, card.cut, card.name);
      const before = this.tools.get(card.id);
      if (before === card.status) return;
      this.tools.set(card.id, card.status);
      if ((before === void 0 || before === "queued") && card.status !== "queued") {
        this.emit({ type: "tool_call", id: card.id, name: card.name, input: card.input });
      }
      if (card.status === "waiting") {
        this.emit({ type: "approval_asked", id: card.id, name: card.name, reason: card.reason ?? "" });
        this.onWaiting(card);
      } else if (isTerminal(card.status)) {
        this.emit({
          type: "tool_result",
          id: card.id,
          name: card.name,
          status: card.status,
          ...card.reason === void 0 ? {} : { reason: card.reason },
          ...card.result === void 0 ? {} : { result: card.result },
          ...card.error === void 0 ? {} : { error: card.error }
        });
      }
    }
  };

  // src/exec/globals.ts
  function utf8(text2) {
    const bytes = [];
    for (const char of text2) {
      const code = char.codePointAt(0) ?? 0;
      if (code < 128) bytes.push(code);
      else if (code < 2048) bytes.push(192 | code >> 6, 128 | code & 63);
      else if (code < 65536) bytes.push(224 | code >> 12, 128 | code >> 6 & 63, 128 | code & 63);
      else bytes.push(240 | code >> 18, 128 | code >> 12 & 63, 128 | code >> 6 & 63, 128 | code & 63);
    }
    return Uint8Array.from(bytes);
  }
  function installGlobals(host2, scope2) {
    const timers = /* @__PURE__ */ new Map();
    let next = 1;
    scope2.setTimeout = (run, ms = 0, ...args) => {
      const id = next++;
      const timer = { cleared: false };
      timers.set(id, timer);
      void host2.timer(id, Math.max(0, Number(ms) || 0)).then(() => {
        timers.delete(id);
        if (!timer.cleared) run(...args);
      });
      return id;
    };
    scope2.clearTimeout = (id) => {
      const timer = id === void 0 ? void 0 : timers.get(id);
      if (!timer) return;
      timer.cleared = true;
      host2.clearTimer(id);
    };
    if (typeof scope2.queueMicrotask !== "function") {
      scope2.queueMicrotask = (run) => void Promise.resolve().then(run);
    }
    const crypto2 = scope2.crypto ?? {};
    crypto2.randomUUID = () => host2.uuid();
    scope2.crypto = crypto2;
    if (typeof scope2.TextEncoder !== "function") {
      scope2.TextEncoder = class {
        encode(text2 = "") {
          return utf8(text2);
        }
      };
    }
    const quiet = () => void 0;
    scope2.console ??= { log: quiet, info: quiet, warn: quiet, error: quiet, debug: quiet };
  }

  // src/exec/main.ts
  async function runExec(host2, request) {
    const ipc = hostIpc(host2);
    const emit = (event) => host2.emit(JSON.stringify(event));
    const conversation = request.resume === null ? null : await ipc.openConversation(request.resume);
    const loop = new AgentLoop(ipc, { projectRoot: request.root, conversation, agents: projectAgents });
    if (conversation) await loop.loaded();
    const before = loop.state.get().usage;
    let stoppedAtApproval = false;
    const ask = async (card) => {
      const args = { id: card.id, name: card.name, input: card.input, reason: card.reason ?? "" };
      const raw = JSON.parse(await host2.invoke("ask_approval", JSON.stringify(args)));
      const answer = "ok" in raw ? raw.ok : { decision: "deny", by: "no_terminal" };
      emit({ type: "approval_answered", id: card.id, ...answer });
      loop.decide(card.id, answer.decision);
      if (answer.by === "no_terminal") {
        stoppedAtApproval = true;
        loop.stop();
      }
    };
    const tracker = new EventTracker(emit, (card) => void ask(card), loop.state.get());
    const unsubscribe = loop.state.subscribe((state2) => tracker.update(state2));
    const builtIn = builtInOf(request.task);
    if (builtIn !== null && !(builtIn.headless && conversation)) {
      const why = builtIn.headless ? "there is no conversation to compact without --resume ID" : "it acts on the window, which exec does not have";
      emit({ type: "error", error: wireError("invalid_input", `\`/${builtIn.name}\` is one of Corral's own commands and does not run here: ${why}.`, "Run it in the window, or give exec a task for the model.") });
      emit({ type: "final", outcome: "failed", text: "", conversation: null, stored: !request.ephemeral, usage: runUsage(noUsage()) });
      unsubscribe();
      return "failed";
    }
    if (builtIn !== null) await loop.compact();
    else await loop.send(request.task);
    await loop.saveAll();
    unsubscribe();
    const state = loop.state.get();
    const usage = runUsage(usageSince(state.usage, before));
    emit({ type: "usage", ...usage });
    const last = state.items.at(-1);
    const text2 = last?.kind === "assistant" ? last.text : "";
    const ended = builtIn !== null ? !state.error : text2 !== "";
    const outcome = stoppedAtApproval ? "approval" : state.error || state.turnLimitReached || !ended ? "failed" : "done";
    if (state.turnLimitReached) emit({ type: "notice", text: "The run stopped at its turn budget before the task was done." });
    const storeError = request.ephemeral ? null : loop.saveError;
    const stored = !request.ephemeral && loop.unsaved === 0;
    if (storeError) {
      const what = loop.conversationId === null ? "Nothing of the conversation was stored" : `The conversation ${loop.conversationId} was stored only in part`;
      emit({ type: "notice", text: `${what}: ${loop.unsaved} of its entries could not be written to the history (${storeError.message}).` });
    }
    emit({ type: "final", outcome, text: text2, conversation: request.ephemeral ? null : loop.conversationId, stored, ...storeError ? { store_error: storeError } : {}, usage });
    return outcome === "done" && !request.ephemeral && !stored ? "not_stored" : outcome;
  }
  var scope = globalThis;
  var host = scope.__corralHost;
  if (host) {
    installGlobals(host, scope);
    scope.corralExec = (request) => runExec(host, JSON.parse(request));
    scope.corralAcp = (request) => runAcp(host, JSON.parse(request));
  }
})();
