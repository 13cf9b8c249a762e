#!/usr/bin/env bash
# How long a task takes to start in a container against one in a worktree
# here: the median wall time of `corral-cli exec --worktree` whose scripted
# model asks for one tool call (`ls`) and then answers, with the session
# here, and with it in a Podman container of Corral's image (image present).
# The difference is the container's start and serve's start in it. Also the
# cold start: making the image (scripts/image.sh), with the Debian root
# already made and, once, from nothing (mmdebstrap).
# Usage: bench/task-start.sh [RUNS]   (default 11; root, Podman installed)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-11}
cargo build -p corral-cli --quiet
cli=${CARGO_TARGET_DIR:-$PWD/target}/debug/corral-cli
work=$(mktemp -d)
tag=localhost/corral-task:bench-$$
trap 'podman rmi --force "$tag" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
mkdir -p "$work/project" "$work/home"
echo "hello" > "$work/project/a.txt"
git -C "$work/project" init -q
git -C "$work/project" add .
git -C "$work/project" -c user.name=b -c user.email=b@b commit -qm first
export HOME=$work/home XDG_CONFIG_HOME=$work/home/.config XDG_DATA_HOME=$work/home/.local/share CORRAL_NO_KEYCHAIN=1

ms() { # command... → wall milliseconds (a failed run stops the bench)
  local start end
  start=$(date +%s%N)
  "$@" > "$work/last.out" 2>&1 || { echo "bench: failed: $*" >&2; cat "$work/last.out" >&2; exit 1; }
  end=$(date +%s%N)
  echo $(( (end - start) / 1000000 ))
}

cache=$(realpath -m "${CARGO_TARGET_DIR:-target}")/image
suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
if [ -n "${FROM_NOTHING:-}" ]; then
  mv "$cache/$suite-base.tar" "$work/kept-base.tar" 2>/dev/null || true
  echo "image from nothing (mmdebstrap): $(ms scripts/image.sh --cli "$cli" --tag "$tag") ms"
  [ -f "$work/kept-base.tar" ] && mv "$work/kept-base.tar" "$cache/$suite-base.tar"
fi
scripts/image.sh --cli "$cli" --tag "$tag" > /dev/null
echo "image, Debian root made:           $(ms scripts/image.sh --cli "$cli" --tag "$tag") ms"

# The scripted server: two answers per run (the call, then the reply), for both kinds of run.
turns=$(node -e 'const n = 4 * Number(process.argv[1]) + 2; console.log(JSON.stringify(Array.from({length: n}, (_, i) => i % 2 ? {text: "Done.", gap: 0} : {tools: [{name: "exec_shell", input: {command: "ls"}}], gap: 0})))' "$runs")
mkfifo "$work/in"
node crates/corral-cli/tests/exec/scripted.mjs "$turns" < "$work/in" > "$work/server.out" &
exec 3> "$work/in"
while [ ! -s "$work/server.out" ]; do sleep 0.05; done
port=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8").split("\n")[0]).port)' "$work/server.out")

task=("$cli" exec --root "$work/project" --no-lsp --no-checkpoint --ephemeral --mode full_auto
  --provider openai --base-url "http://127.0.0.1:$port/v1" --model scripted)
engine=(--container "$tag" --engine-option=--ulimit=nofile=20000:20000 --engine-option=--ulimit=nproc=4096:4096)
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
here=$(for i in $(seq "$runs"); do ms "${task[@]}" --worktree "here-$i" "List the folder"; done | median)
boxed=$(for i in $(seq "$runs"); do ms "${task[@]}" --worktree "box-$i" "${engine[@]}" "List the folder"; done | median)
exec 3>&-
echo "task in a worktree here:           ${here} ms (median of $runs)"
echo "task in a container (image there): ${boxed} ms (median of $runs)"
echo "the container's share:             $(( boxed - here )) ms"
