#!/usr/bin/env bash
# Measures the fixed prompt prefix of each window class with a real
# llama-server's chat template and tokenizer, offline once its sources are
# fetched, and writes the counts to ui/src/test/llamaServerPrefix.json (the
# fixture promptBudget.test.ts holds the estimate to).
#
#   scripts/llama-prefix.sh            # build (once, slow: ~30 min on 2 cores), measure, write
#   scripts/llama-prefix.sh --build    # only build the server and the models (scripts/llama-reread.sh)
#
# llama.cpp is not packaged in Debian 12; its source is, vendored, in the
# llama-cpp-python sdist on PyPI, with the vocab-only GGUF files llama.cpp
# tests its tokenizers with. Only the llama-server target is built (cmake
# and g++ from apt). llama-server has no vocab-only mode (`vocab_only` is a
# flag of the C API, not of the server), so scripts/vocab-model.py wraps a
# vocabulary in a one-layer model of random weights: the server starts, and
# its /apply-template and /tokenize answer with the real template and
# tokenizer. Two models are measured:
#   qwen3   Qwen2's vocabulary with the tokens Qwen3 adds, Qwen3-0.6B's template
#   llama3  Llama 3's vocabulary (llama-bpe), Llama-3.1-8B-Instruct's template
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

version=0.3.36
work=${CORRAL_LLAMA_DIR:-$HOME/.cache/corral-llama}
src=$work/llama_cpp_python-$version/vendor/llama.cpp
server=$src/build/bin/llama-server
port=${CORRAL_LLAMA_PORT:-18080}
mkdir -p "$work"

sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
missing=()
for pkg in cmake g++ python3-numpy; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [ ! -d "$src" ]; then
  echo "llama-prefix: fetching the llama-cpp-python $version sdist"
  # pip prepares the sdist's metadata too (a cmake step); only the archive is kept.
  python3 -m pip download --quiet --no-deps --no-binary :all: "llama-cpp-python==$version" -d "$work"
  tar -xzf "$work/llama_cpp_python-$version.tar.gz" -C "$work"
fi

if [ ! -x "$server" ]; then
  echo "llama-prefix: building llama-server (only that target)"
  # No optimization: the server only renders and tokenizes, and -O0 halves the build.
  cmake -S "$src" -B "$src/build" -DCMAKE_BUILD_TYPE= -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DGGML_NATIVE=OFF >/dev/null
  cmake --build "$src/build" --target llama-server -j "$(nproc)"
fi

# Debian's python3 has numpy; gguf-py comes with the llama.cpp sources.
model() { # name vocab [--qwen3]
  [ -f "$work/$1.gguf" ] || /usr/bin/python3 scripts/vocab-model.py "$src/gguf-py" "$src/models/ggml-vocab-$2.gguf" "$work/$1.gguf" "${@:3}"
}
model qwen3 qwen2 --qwen3
model llama3 llama-bpe
[ "${1:-}" = --build ] && exit 0

fixture=$repo/ui/src/test/llamaServerPrefix.json
echo "{}" >"$fixture.tmp"
measure() { # name template
  "$server" -m "$work/$1.gguf" --jinja --chat-template-file "$src/models/templates/$2.jinja" \
    -c 4096 --host 127.0.0.1 --port "$port" >"$work/$1.log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 120); do
    curl -sf "http://127.0.0.1:$port/health" >/dev/null && break
    sleep 1
  done
  (cd ui && npx vite-node scripts/prefix-tokens.ts -- "http://127.0.0.1:$port" --fixture "$fixture.tmp" --label "$1" --template "$2")
  kill "$pid"
  wait "$pid" 2>/dev/null || true
}
measure qwen3 Qwen-Qwen3-0.6B
measure llama3 meta-llama-Llama-3.1-8B-Instruct
mv "$fixture.tmp" "$fixture"
echo "llama-prefix: wrote $fixture"
