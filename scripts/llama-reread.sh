#!/usr/bin/env bash
# What a real llama-server reads again over a conversation in a 2,048-token
# window: the requests the app sends in the ten-message compaction e2e test
# (e2e/tests/small-window-compaction.test.js, recorded as sent) replayed in
# order on llama-server with one slot and its prompt cache, each asking one
# token. The server's own `timings` say, per request, how many tokens it
# took from its cache (`cache_n`) and how many it read (`prompt_n`).
#
#   scripts/llama-reread.sh     # builds what is missing (scripts/llama-prefix.sh --build), runs, prints
#
# The model is scripts/llama-prefix.sh's Qwen3 vocabulary in one layer of
# random weights, with Qwen3-0.6B's chat template: the prompt and its
# tokens are a real Qwen3 server's; the replies are noise and unused.
# The server's window is 4,096, not the test's 2,048: the scripted server
# the requests were made against counts four characters a token, and the
# loop sized them by its usage; by Qwen3's tokenizer the largest come to
# about 2,200 tokens (on a real 2k server the loop would learn that from
# its usage and compact sooner).
set -euo pipefail
cd "$(dirname "$0")/.."
work=${CORRAL_LLAMA_DIR:-$HOME/.cache/corral-llama}
src=$work/llama_cpp_python-0.3.36/vendor/llama.cpp
port=${CORRAL_LLAMA_PORT:-18081}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

scripts/llama-prefix.sh --build
CORRAL_E2E_RECORD=$out/requests.json scripts/e2e.sh e2e/tests/small-window-compaction.test.js >"$out/e2e.log" 2>&1 || {
  tail -40 "$out/e2e.log"
  exit 1
}

"$src/build/bin/llama-server" -m "$work/qwen3.gguf" --jinja --chat-template-file "$src/models/templates/Qwen-Qwen3-0.6B.jinja" \
  -c 4096 -np 1 --host 127.0.0.1 --port "$port" >"$out/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$out"' EXIT
for _ in $(seq 1 120); do
  curl -sf "http://127.0.0.1:$port/health" >/dev/null && break
  sleep 1
done
node scripts/llama-reread.mjs "http://127.0.0.1:$port" "$out/requests.json"
