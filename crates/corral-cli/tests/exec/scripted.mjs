// The e2e suite's scripted LLM server (e2e/lib/llm-server.js) for the exec
// tests in Rust: `node scripted.mjs TURNS_JSON` answers OpenAI streaming
// requests turn by turn, where each turn is `{"text": "..."}` or
// `{"tools": [{"name", "input"}], "text"?}` or `{"status": 401}`; `"gap": MS`
// sets the pause between a turn's events (the kit's default: 15 ms). It prints
// `{"port": N}` once listening; when its stdin closes, it prints
// `{"requests": [the bodies of the streamed requests], "authorizations":
// [their Authorization headers, or null], "unexpected": [...]}`
// and exits.
import { startLlmServer } from "../../../../e2e/lib/llm-server.js";
import { openai, slow } from "../../../../e2e/lib/wire.js";

const turns = JSON.parse(process.argv[2] ?? "[]").map((turn) => {
  const response = reply(turn);
  return turn.gap === undefined ? response : slow(response, turn.gap);
});

function reply(turn) {
  if (turn.status) return { format: "openai", status: turn.status, headers: {}, json: { error: { message: `scripted ${turn.status}` } } };
  if (turn.tools) return openai.toolCalls(turn.tools, { text: turn.text ?? "" });
  return openai.text(turn.text);
}
const llm = await startLlmServer(turns);
process.stdout.write(`${JSON.stringify({ port: llm.port })}\n`);
process.stdin.resume();
process.stdin.on("end", async () => {
  const unexpected = llm.unexpected.map((r) => `${r.method} ${r.path}: ${r.why}`);
  const authorizations = llm.requests.map((r) => r.headers.authorization ?? null);
  const report = `${JSON.stringify({ requests: llm.requests.map((r) => r.body), authorizations, unexpected })}\n`;
  await llm.close?.();
  // A pipe takes a long line in parts: exit once all of it is written.
  process.stdout.write(report, () => process.exit(0));
});
