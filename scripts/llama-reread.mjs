// Replays recorded chat requests (OpenAI's wire format, as the app sent
// them) on a llama-server, in order, one token each, and prints what the
// server read for each: from its cache (`timings.cache_n`) and again
// (`timings.prompt_n`). See scripts/llama-reread.sh.
//
//   node scripts/llama-reread.mjs http://127.0.0.1:18081 requests.json
import { readFileSync } from "node:fs";

const [server, file] = process.argv.slice(2);
const bodies = JSON.parse(readFileSync(file, "utf8"));
const rows = [];
for (const [i, body] of bodies.entries()) {
  const summary = !(body.tools?.length > 0);
  const response = await fetch(`${server}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ ...body, stream: false, max_tokens: 1, cache_prompt: true }),
  });
  const answer = await response.json();
  if (!response.ok) {
    rows.push({ i, summary, error: answer.error?.message ?? response.status });
    continue;
  }
  const { cache_n: cached, prompt_n: read } = answer.timings;
  rows.push({ i, summary, cached, read, total: cached + read });
}

console.log("request\tkind\tprompt\tfrom cache\tread again");
for (const r of rows) console.log(`${r.i}\t${r.summary ? "summary" : "work"}\t${r.error ? `error: ${r.error}` : `${r.total}\t${r.cached}\t${r.read}`}`);
const ok = rows.filter((r) => !r.error);
const sum = (list, key) => list.reduce((n, r) => n + r[key], 0);
const work = ok.filter((r) => !r.summary);
console.log(
  `\n${ok.length} requests (${ok.length - work.length} summaries): ${sum(ok, "total")} prompt tokens, ${sum(ok, "read")} read (${Math.round((100 * sum(ok, "read")) / sum(ok, "total"))} %), ` +
    `${sum(ok, "cached")} from the cache; work requests alone: ${sum(work, "read")} of ${sum(work, "total")} read`,
);
if (rows.length !== ok.length) process.exitCode = 1;
