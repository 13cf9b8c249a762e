#!/usr/bin/env bash
# What `corral-cli exec` adds to start-up over `corral-cli call`: the median
# wall time of a one-turn exec (the embedded engine started, the agent
# loop's bundle evaluated, one request to the scripted LLM server on
# loopback answered at once, its events without the kit's 15 ms pauses,
# --ephemeral) against one `call` of read_file
# in the same project. Release build.
# Usage: bench/exec-startup.sh [RUNS]   (default 21)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-21}
cargo build --release -p corral-cli --quiet
cli=${CARGO_TARGET_DIR:-$PWD/target}/release/corral-cli
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/project" "$work/home"
echo "hello" > "$work/project/a.txt"
export HOME=$work/home XDG_CONFIG_HOME=$work/home/.config XDG_DATA_HOME=$work/home/.local/share CORRAL_NO_KEYCHAIN=1

# The scripted server: one answer per exec run (and one warm-up).
turns=$(node -e 'console.log(JSON.stringify(Array.from({length: Number(process.argv[1]) + 1}, () => ({text: "Hello.", gap: 0}))))' "$runs")
mkfifo "$work/in"
node crates/corral-cli/tests/exec/scripted.mjs "$turns" < "$work/in" > "$work/server.out" &
exec 3> "$work/in"
while [ ! -s "$work/server.out" ]; do sleep 0.05; done
port=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8").split("\n")[0]).port)' "$work/server.out")

median_ms() { # command...
  local times=() start end
  for _ in $(seq "$runs"); do
    start=$(date +%s%N)
    "$@" > /dev/null 2>&1
    end=$(date +%s%N)
    times+=($(( (end - start) / 1000 )))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)] / 1000}'
}

call=("$cli" call --root "$work/project" --no-lsp --no-checkpoint read_file '{"path":"a.txt"}')
exec_=("$cli" exec --root "$work/project" --no-lsp --no-checkpoint --ephemeral
  --provider openai --base-url "http://127.0.0.1:$port/v1" --model scripted "Say hello")
"${call[@]}" > /dev/null
"${exec_[@]}" > /dev/null 2>&1
call_ms=$(median_ms "${call[@]}")
exec_ms=$(median_ms "${exec_[@]}")
exec 3>&-
echo "corral-cli call (read_file):        ${call_ms} ms (median of $runs)"
echo "corral-cli exec (one model turn):   ${exec_ms} ms (median of $runs)"
awk -v a="$exec_ms" -v b="$call_ms" 'BEGIN {printf "exec over call:                     %.1f ms\n", a - b}'
