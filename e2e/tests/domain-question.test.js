// A domain question in the window: in ask mode a command approved with
// the network connects, through the egress proxy, to a domain off the
// allowlist; the window asks; Allow lets it through and the command gets
// the server's page; a second command of the same conversation reaches the
// same domain without a question; Refuse gives a third command a refused
// connection, logged in its output panel and named on its card.
//
// The proxy never connects to a loopback or private address, and nothing
// relaxes that for tests. So, as the proxy's Rust tests do, the test runs
// itself again inside a user, network and mount namespace of its own
// (`unshare -rnm`): there it puts 198.51.100.7 (a documentation address,
// which the proxy's rules let through) on the namespace's loopback, serves
// HTTP on it, and binds its own `/etc/hosts` naming it `elsewhere.test` and
// `refused.test`. The app, its driver and the scripted model run in there
// with it; the display is reached through its socket file.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { ARTIFACTS, tid, waitUntil, withApp } from "../lib/app.js";
import { toolResults } from "../lib/requests.js";
import { openai } from "../lib/wire.js";

const INSIDE = "CORRAL_E2E_DOMAIN_NAMESPACE";
const ADDRESS = "198.51.100.7";
const HOSTS = `127.0.0.1 localhost\n${ADDRESS} elsewhere.test refused.test\n`;
// Prepares the namespace, then runs this file's tests in it ($2).
const SETUP = `set -e
ip link set lo up
ip addr add ${ADDRESS}/32 dev lo
mount --bind "$1" /etc/hosts
exec node --test --test-reporter=spec "$2"`;

/** A fetch python3 makes through the proxy (urllib reads `http_proxy`). */
const fetch = (domain) => ({
  command: "python3",
  args: [
    "-c",
    `import urllib.request\ntry:\n    print(urllib.request.urlopen('http://${domain}/', timeout=60).read().decode())\nexcept Exception as e:\n    print('failed', e)`,
  ],
});

if (!process.env[INSIDE]) {
  test("a domain question, run in a network namespace of its own", { timeout: 300_000 }, async (t) => {
    const missing = ["/usr/bin/unshare", "/usr/sbin/ip", "/usr/bin/python3"].filter((p) => !fs.existsSync(p));
    if (missing.length) {
      t.skip(`missing here: ${missing.join(", ")}`);
      return;
    }
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "corral-e2e-hosts-"));
    const hosts = path.join(dir, "hosts");
    fs.writeFileSync(hosts, HOSTS);
    const self = fileURLToPath(import.meta.url);
    const log = path.join(ARTIFACTS, "domain-question--inside.txt");
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    const out = fs.createWriteStream(log);
    // Not a run nested in this one (node:test would skip its files): a run of its own.
    const env = { ...process.env, [INSIDE]: "1" };
    delete env.NODE_TEST_CONTEXT;
    const child = spawn("unshare", ["-r", "-n", "-m", "sh", "-c", SETUP, "sh", hosts, self], {
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let said = "";
    for (const stream of [child.stdout, child.stderr]) {
      stream.on("data", (chunk) => {
        said += chunk;
        out.write(chunk);
      });
    }
    const code = await new Promise((resolve) => child.on("close", resolve));
    out.end();
    fs.rmSync(dir, { recursive: true, force: true });
    assert.equal(code, 0, `inside the namespace (log: ${log}):\n${said}`);
    assert.match(said, /pass 1\b/, said);
  });
} else {
  test("the window asks about a domain once per conversation; Allow lets it through, Refuse refuses and logs it", { timeout: 240_000 }, async (t) => {
    const server = http.createServer((req, res) => res.end(`hello from ${req.headers.host}`));
    await new Promise((resolve) => server.listen(80, ADDRESS, resolve));
    t.after(() => server.close());

    const script = [
      openai.toolCalls([{ name: "exec_shell", input: fetch("elsewhere.test") }]),
      (req) => {
        const result = toolResults(req).at(-1);
        assert.match(JSON.stringify(result), /hello from elsewhere\.test/);
        return openai.toolCalls([{ name: "exec_shell", input: fetch("elsewhere.test") }]);
      },
      (req) => {
        const result = toolResults(req).at(-1);
        assert.match(JSON.stringify(result), /hello from elsewhere\.test/);
        return openai.toolCalls([{ name: "exec_shell", input: fetch("refused.test") }]);
      },
      (req) => {
        const result = toolResults(req).at(-1);
        const said = JSON.stringify(result);
        assert.match(said, /failed/);
        assert.doesNotMatch(said, /hello from/);
        assert.match(said, /corral proxy: refused GET http:\/\/refused\.test:80\//);
        return openai.text("One domain allowed, one refused.");
      },
    ];

    await withApp(t, { script }, async (app) => {
      const cards = tid("tool-card", '[data-tool="exec_shell"]');
      const question = tid("domain-question");
      // The conversation keeps only the rows in sight, and follows its end:
      // the newest card and panel are the last ones on the page.
      const last = async (css) => (await app.query(css)).at(-1);
      const waiting = (what) =>
        waitUntil(async () => (await last(cards))?.attrs["data-status"] === "waiting", { what: `${what} waiting for approval`, timeout: 60_000 });
      const approveWithNetwork = async (what) => {
        await waiting(what);
        await app.answer("approve-network");
      };
      const answerDomain = async (testid) => {
        await app.waitFor(`${question} [data-armed="true"]`, { what: "the question's buttons to take clicks", timeout: 30_000 });
        await app.click(`${question} ${tid(testid)}`);
      };
      const finished = (what, pattern) =>
        waitUntil(
          async () => {
            const panel = await last(tid("command-panel"));
            const output = await last(tid("command-output"));
            return panel?.attrs["data-exit-code"] !== undefined && pattern.test(output?.text ?? "") ? output : null;
          },
          { what, timeout: 60_000 },
        );

      await app.send("Fetch the page of elsewhere.test twice, then refused.test.");

      // The first command: the window asks about the domain, Allow lets it through.
      await approveWithNetwork("the first fetch");
      const asked = await app.waitForAny(question, () => true, { what: "the domain question", timeout: 30_000 });
      assert.match(asked.text, /not on the allowlist/);
      const [domain] = await app.query(tid("domain-question-domain"));
      assert.equal(domain.text, "elsewhere.test");
      await app.screenshot("asked");
      await answerDomain("allow-domain");
      const first = await finished("the first fetch's page in its panel", /hello from elsewhere\.test/);
      assert.match(first.text, /corral proxy: allowed GET http:\/\/elsewhere\.test:80\/ \(connected to 198\.51\.100\.7\)/);

      // The second: the same domain in the same conversation asks nothing
      // (a question would hold the command, and the model, for two minutes).
      await approveWithNetwork("the second fetch");
      await waiting("the fetch of refused.test");
      assert.equal((await app.query(question)).length, 0, "the window asked again");
      await app.answer("approve-network");

      // The third: another domain asks; Refuse refuses the connection,
      // logged in the command's panel and named on its card.
      const again = await app.waitForAny(question, () => true, { what: "the second domain's question", timeout: 30_000 });
      assert.match(again.text, /refused\.test/);
      await answerDomain("refuse-domain");
      const third = await finished("the refusal in the third panel", /corral proxy: refused GET http:\/\/refused\.test:80\//);
      assert.doesNotMatch(third.text, /hello from/);
      const refused = await app.waitForAny(tid("network-refused"), () => true, { what: "the card naming the refused connection" });
      assert.match(refused.text, /refused\.test/);
      await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("One domain allowed, one refused."), { what: "the reply" });
      await app.screenshot("refused");
    });
  });
}
