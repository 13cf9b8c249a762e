#!/usr/bin/env python3
"""search_files in a long-lived process with a live index, against ripgrep.

    bench/search_live.py CLI TREE INDEX RUNS WARMUP QUERIES.json

Starts `CLI mcp --root TREE --index INDEX` (what an agent talks to all day),
waits until its index is built and its watch vouches for it, times each
query RUNS times over MCP, then checks that each query returned exactly
ripgrep's matches and times the plain search (a `CLI call` process, no
index) and a ripgrep process RUNS times each. Prints one table row per
query: the median of each, in ms, and how many times faster than ripgrep
the live search is.

The live runs come first, before any ripgrep or plain run: those read
every file of the watched tree, and each open is an inotify event for the
server's watch (its watch mask includes opens). A whole-tree read floods
the kernel's queue (fs.inotify.max_queued_events, 16384 by default) faster
than a loaded machine drains it; once it overflows the watch can no longer
vouch, so the server walks and rebuilds its index, and interleaved live
times would then be those of a walk. The script says so if a live run
after them is much slower.

QUERIES.json: a list of {"name", "input" (search_files' input), "rg"
(ripgrep's flags and pattern, a list), "cap" (optional: the input's
max_results; ripgrep is then stopped after as many lines, and the matches
are not compared)}. Standard library only.
"""

import json
import statistics
import subprocess
import sys
import time


class Server:
    """A JSON-RPC client over the server's stdin/stdout (one JSON per line)."""

    def __init__(self, argv):
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self.next_id = 0

    def send(self, message):
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit("the server closed its output")
            reply = json.loads(line)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise SystemExit(f"{method}: {reply['error']}")
                return reply["result"]

    def search(self, arguments):
        result = self.request("tools/call", {"name": "search_files", "arguments": arguments})
        if result.get("isError"):
            raise SystemExit(f"search_files failed: {result}")
        return result["structuredContent"]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def ripgrep(tree, rg, cap=None):
    """ripgrep's output; with a cap, only its first cap + 1 lines (then it
    is stopped, as a capped search stops)."""
    flags = [f for f in rg[:-1] if f]
    argv = ["rg", "--no-require-git", "-n", "--no-heading", "--color", "never", *flags, "-e", rg[-1], "./"]
    if cap is None:
        return subprocess.run(argv, cwd=tree, capture_output=True, text=True).stdout
    with subprocess.Popen(argv, cwd=tree, stdout=subprocess.PIPE, text=True) as proc:
        lines = [proc.stdout.readline() for _ in range(cap + 1)]
        proc.kill()
    return "".join(lines)


def rg_matches(out):
    found = set()
    for line in out.splitlines():
        path, number, _ = line.split(":", 2)
        found.add((path.removeprefix("./"), int(number)))
    return found


def main():
    cli, tree, index, runs, warmup, queries = sys.argv[1:7]
    runs, warmup = int(runs), int(warmup)
    with open(queries) as f:
        queries = json.load(f)
    server = Server([cli, "mcp", "--root", tree, "--mode", "read_only", "--index", index])
    server.request(
        "initialize",
        {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        },
    )
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    # The index is built in the background; until then searches walk.
    started = time.monotonic()
    probe = queries[0]["input"]
    while not server.search(probe)["indexed"]:
        if time.monotonic() - started > 1800:
            raise SystemExit("the index was never ready")
        time.sleep(1)
    print(f"live index: ready {time.monotonic() - started:.0f} s after the server started")

    # The live runs first (see the docstring), the results kept for the
    # check.
    print(f"timing: median of {runs} runs after {warmup} warm-up runs, live first")
    live, outputs = {}, {}
    for q in queries:
        for _ in range(warmup):
            server.search(q["input"])
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            outputs[q["name"]] = server.search(q["input"])
            times.append((time.perf_counter() - t0) * 1000)
        live[q["name"]] = statistics.median(times)

    for q in queries:
        out = outputs[q["name"]]
        if q.get("cap"):
            # Which matches a capped parallel search returns is not fixed.
            print(f"  {q['name']}: capped at {q['cap']}, truncated: {out['truncated']}")
            continue
        if out["truncated"] or not out["indexed"]:
            raise SystemExit(f"{q['name']}: truncated or not indexed: pick a rarer query")
        ours = {(m["path"], m["line"]) for m in out["matches"]}
        theirs = rg_matches(ripgrep(tree, q["rg"]))
        if ours != theirs:
            raise SystemExit(f"{q['name']}: the matches differ from ripgrep's")
        print(f"  {q['name']}: same {len(ours)} matches as ripgrep")

    print(f"{'query':<18} {'live_ms':>10} {'plain_ms':>10} {'rg_ms':>10} {'rg/live':>8}")
    for q in queries:
        for _ in range(warmup):
            ripgrep(tree, q["rg"], q.get("cap"))
        plain, rg = [], []
        for _ in range(runs):
            t0 = time.perf_counter()
            subprocess.run(
                [cli, "call", "--root", tree, "search_files", json.dumps(q["input"])],
                capture_output=True,
                check=True,
            )
            plain.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            ripgrep(tree, q["rg"], q.get("cap"))
            rg.append((time.perf_counter() - t0) * 1000)
        a, p, b = live[q["name"]], statistics.median(plain), statistics.median(rg)
        print(f"{q['name']:<18} {a:>10.1f} {p:>10.1f} {b:>10.1f} {b / a:>8.1f}")

    # Whether the watch survived the whole-tree reads (not timed above).
    t0 = time.perf_counter()
    server.search(queries[0]["input"])
    after = (time.perf_counter() - t0) * 1000
    note = "" if after < 5 * live[queries[0]["name"]] + 50 else " (the watch no longer vouches: walked)"
    print(f"after the ripgrep runs, {queries[0]['name']} once more: {after:.1f} ms{note}")
    server.close()


if __name__ == "__main__":
    main()
