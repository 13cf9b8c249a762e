// The e2e suite's scripted LLM server (e2e/lib/llm-server.js) for the exec
// tests in Rust: `node scripted.mjs TURNS_JSON` answers OpenAI streaming
// requests turn by turn, where each turn is `{"text": "..."}` or
// `{"tools": [{"name", "input"}], "text"?}` or `{"status": 401}`; `"gap": MS`
// sets the pause between a turn's events (the kit's default: 15 ms). A turn
// may also hold or choose its reply: `"after": N` holds it until the server
// has had N streamed requests (10 s at most, then the turn fails, which the
// report shows as unexpected); `"by_task": {"WORD": turn, ...}` answers with
// the turn whose WORD the request's messages contain (for requests that
// may come in either order, such as subagents running at once); `"usage":
// {...}` is the OpenAI usage its reply reports instead of the kit's. It prints
// `{"port": N}` once listening; when its stdin closes, it prints
// `{"requests": [the bodies of the streamed requests], "authorizations":
// [their Authorization headers, or null], "unexpected": [...]}`
// and exits.
import { startLlmServer } from "../../../../e2e/lib/llm-server.js";
import { openai, slow } from "../../../../e2e/lib/wire.js";

const turns = JSON.parse(process.argv[2] ?? "[]").map((turn) => async (request) => {
  if (turn.after !== undefined) await llm.waitForRequests(turn.after, 10_000);
  const chosen = turn.by_task ? byTask(turn.by_task, request) : turn;
  const response = reply(chosen);
  return chosen.gap === undefined ? response : slow(response, chosen.gap);
});

function byTask(choices, request) {
  const sent = JSON.stringify(request.body?.messages ?? []);
  const word = Object.keys(choices).find((w) => sent.includes(w));
  if (word === undefined) throw new Error(`no scripted task word in ${sent}`);
  return choices[word];
}

function reply(turn) {
  if (turn.status) return { format: "openai", status: turn.status, headers: {}, json: { error: { message: `scripted ${turn.status}` } } };
  const response = turn.tools ? openai.toolCalls(turn.tools, { text: turn.text ?? "" }) : openai.text(turn.text);
  return turn.usage ? reporting(response, turn.usage) : response;
}

/** `response` with its usage chunk reporting `usage`. */
function reporting(response, usage) {
  const events = response.events.map((e) => {
    const data = e.data.startsWith("{") ? JSON.parse(e.data) : null;
    return data?.usage ? { ...e, data: JSON.stringify({ ...data, usage }) } : e;
  });
  return { ...response, events };
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
