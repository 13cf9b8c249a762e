#!/usr/bin/env bash
# The first command of a process: a one-shot `corral-cli call exec_shell`
# running `git --version` against, in the same rounds, bare bubblewrap
# running `git --version` and a one-shot `corral-cli call read_file` (a
# process's start-up and a call without a command). What the first
# command costs over the other two together is the gap.
#
# The one-shot exec_shell is timed in three states:
# - `exec_shell`: a probe kept and a copy of the view's `/etc` made by an
#   earlier process (here a `corral-cli mcp` session of two commands,
#   as the app or `corral-cli exec` makes it);
# - `exec_shell_no_etc_copy`: the probe kept, no `/etc` copy (only
#   one-shot processes ran since `/etc` last changed);
# - `exec_shell_cold`: neither (the kept probe's folder removed before
#   each run): the first command after a boot, or on a new machine.
# Release build; the rounds take the five in a shuffled order; median wall
# times (ms) of each. Timed by bash's clock (`$EPOCHREALTIME`, no process
# started to read it; setup does not install hyperfine).
# Usage: bench/first-command.sh [RUNS]   (default 31)
#   CORRAL_CLI=path  time that corral-cli instead of building one.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-31}
if [ -z "${CORRAL_CLI:-}" ]; then
  cargo build --release -p corral-cli --quiet
  CORRAL_CLI=${CARGO_TARGET_DIR:-$PWD/target}/release/corral-cli
fi
cli=$CORRAL_CLI
bwrap=$(command -v bwrap) || { echo "no bwrap here" >&2; exit 1; }
git=$(command -v git) || { echo "no git here" >&2; exit 1; }
# Not under /tmp: a home there is a mount of its own in the sandbox, as a
# user's home is not.
work=$(mktemp -d "${BENCH_DIR:-/var/tmp}/corral-first.XXXXXX")
cleanup() {
  chmod -R u+w "$work" 2> /dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/project" "$work/home" "$work/run" "$work/run-empty"
chmod 700 "$work/run" "$work/run-empty"
git -C "$work/project" init -q
echo "hello" > "$work/project/a.txt"
export HOME=$work/home XDG_CONFIG_HOME=$work/home/.config XDG_DATA_HOME=$work/home/.local/share
export XDG_CACHE_HOME=$work/home/.cache CORRAL_NO_KEYCHAIN=1
probe_kept=$XDG_CACHE_HOME/corral/bwrap-probe
p=$work/project

call=("$cli" call --root "$p" --no-lsp --no-checkpoint)
exec_input='{"command":"git","args":["--version"]}'
bare=("$bwrap" --ro-bind / / --dev /dev --proc /proc --unshare-net --unshare-pid
  --die-with-parent --bind "$p" "$p" --chdir "$p" -- "$git" --version)

# Each must work before it is timed.
XDG_RUNTIME_DIR=$work/run "${call[@]}" exec_shell "$exec_input" |
  grep -q '"sandbox": "namespaces"' || {
  echo "exec_shell did not run in the namespaces:" >&2
  "${call[@]}" exec_shell "$exec_input" >&2
  exit 1
}
"${call[@]}" read_file '{"path":"a.txt"}' > /dev/null
"${bare[@]}" > /dev/null

# A process of two commands makes the `/etc` copy for the processes after.
names=(exec_shell exec_shell_no_etc_copy exec_shell_cold bare_bwrap read_file)
request() { # id command
  printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"exec_shell","arguments":%s}}\n' "$1" "$2"
}
{
  echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}'
  echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'
  request 2 "$exec_input"
  sleep 0.5
  request 3 "$exec_input"
  for _ in $(seq 300); do
    compgen -G "$work/run/corral-etc-*/*/stamps" > /dev/null && break
    sleep 0.1
  done
} | XDG_RUNTIME_DIR=$work/run "$cli" mcp --root "$p" --no-lsp --no-checkpoint > /dev/null 2>&1
if ! compgen -G "$work/run/corral-etc-*/*/stamps" > /dev/null; then
  echo "note: no /etc copy was kept for later processes (a version before it was); exec_shell is timed without one" >&2
fi

declare -A times
one() { # name
  local start end runtime=$work/run
  case $1 in
    exec_shell_no_etc_copy) runtime=$work/run-empty ;;
    exec_shell_cold) runtime=$work/run-empty; rm -rf "$probe_kept" ;;
  esac
  case $1 in
    exec_shell*)
      start=${EPOCHREALTIME/[.,]/}
      XDG_RUNTIME_DIR=$runtime "${call[@]}" exec_shell "$exec_input" > /dev/null 2>&1 ;;
    bare_bwrap)
      start=${EPOCHREALTIME/[.,]/}
      "${bare[@]}" > /dev/null 2>&1 ;;
    read_file)
      start=${EPOCHREALTIME/[.,]/}
      "${call[@]}" read_file '{"path":"a.txt"}' > /dev/null 2>&1 ;;
  esac
  end=${EPOCHREALTIME/[.,]/}
  times[$1]+="$(( end - start )) "
}
# Each round in an order of its own: what one run leaves to the kernel
# (a namespace's teardown) weighs on whichever runs next.
for _ in $(seq "$runs"); do
  for name in $(shuf -e "${names[@]}"); do
    one "$name"
  done
done

median() { # microseconds...
  printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)] / 1000}'
}
declare -A med
for n in "${names[@]}"; do
  # shellcheck disable=SC2086
  med[$n]=$(median ${times[$n]})
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-44s %8s ms\n' \
  "bare bwrap git --version" "${med[bare_bwrap]}" \
  "corral-cli call read_file" "${med[read_file]}" \
  "corral-cli call exec_shell git --version" "${med[exec_shell]}" \
  "  the same, no /etc copy" "${med[exec_shell_no_etc_copy]}" \
  "  the same, no probe kept, no /etc copy" "${med[exec_shell_cold]}"
base=$(awk -v b="${med[bare_bwrap]}" -v r="${med[read_file]}" 'BEGIN {print b + r}')
for n in exec_shell exec_shell_no_etc_copy exec_shell_cold; do
  awk -v e="${med[$n]}" -v base="$base" -v n="$n" \
    'BEGIN {printf "%-44s %+8.2f ms\n", n " over bare + read_file", e - base}'
done
echo "(medians of $runs runs each)"
