#!/usr/bin/env python3
"""The first edit of a session: does it come back with its diagnostics?

`corral-cli serve` (a session that lasts, as the window's) starts the
servers of the project's languages when it opens. This opens a small
TypeScript 5 project (typescript-language-server, the test servers of
crates/corral-lsp/tests/servers) and makes the same type error by
edit_file, either at once when serve says it is ready or after waiting
WAIT seconds, and prints how long the edit took and what its result said.
A one-shot `corral-cli call` of the same edit is the baseline: it starts
no server before the edit.

Usage: bench/first-edit.py [WAIT]   (default 10; debug build, setup --test)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(REPO, "target"))
CLI = os.path.join(TARGET, "debug", "corral-cli")
SERVERS = os.path.join(REPO, "crates/corral-lsp/tests/servers/node_modules/.bin")
EDIT = {"path": "main.ts", "old_string": "const n: number", "new_string": "const n: string"}


def project():
    root = tempfile.mkdtemp(prefix="first-edit-")
    with open(os.path.join(root, "tsconfig.json"), "w") as f:
        f.write('{"compilerOptions":{"strict":true}}')
    with open(os.path.join(root, "main.ts"), "w") as f:
        f.write("export const n: number = 1;\n")
    return root


def said(result):
    diagnostics = result.get("diagnostics", {})
    files = diagnostics.get("files", [])
    if files:
        return f"{files[0]['errors']} error(s) reported"
    return "; ".join(diagnostics.get("notes", [])) or "no diagnostics"


def serve(wait):
    root = project()
    args = [CLI, "serve", "--root", root, "--mode", "full_auto", "--lsp-path", SERVERS]
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    ready = json.loads(proc.stdout.readline())
    assert "ready" in ready, ready
    time.sleep(wait)
    request = {"id": 1, "command": "call_tool", "args": {"name": "edit_file", "input": EDIT}}
    start = time.monotonic()
    proc.stdin.write(json.dumps(request) + "\n")
    proc.stdin.flush()
    while True:
        answer = json.loads(proc.stdout.readline())
        if answer.get("id") == 1:
            break
    took = time.monotonic() - start
    proc.stdin.close()
    proc.wait()
    shutil.rmtree(root, ignore_errors=True)
    return took, said(answer.get("ok", {}))


def call():
    root = project()
    args = [CLI, "call", "--root", root, "--mode", "full_auto", "--lsp-path", SERVERS,
            "edit_file", json.dumps(EDIT)]
    start = time.monotonic()
    out = subprocess.run(args, capture_output=True, text=True, check=True)
    took = time.monotonic() - start
    shutil.rmtree(root, ignore_errors=True)
    return took, said(json.loads(out.stdout))


def main():
    wait = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
    for name, run in [
        ("call (no server before the edit)", call),
        ("serve, the edit at once", lambda: serve(0)),
        (f"serve, the edit after {wait:g} s", lambda: serve(wait)),
    ]:
        took, what = run()
        print(f"{name:38} {took * 1000:7.0f} ms  {what}")


main()
