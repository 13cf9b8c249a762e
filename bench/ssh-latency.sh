#!/usr/bin/env bash
# What a tool call costs over ssh against the same call made locally: the
# median wall time of `corral-cli call read_file` with a local root, and
# with the same folder named as ssh://corral-bench/… through a real sshd
# on 127.0.0.1 (started here, with keys made here; the remote's
# corral-cli copied there by the first call). Each remote call opens its
# own ssh session inside the shared connection. Then the same read_file
# as a request to a long-lived `corral-cli serve`: one running here, and
# one running there over a single ssh session (what a remote project in
# the window or exec uses), each the median of RUNS round trips.
# Usage: bench/ssh-latency.sh [RUNS]   (default 21; CORRAL_BENCH_PROFILE=debug
# for the debug build instead of release)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-21}
profile=${CORRAL_BENCH_PROFILE:-release}
if [ "$profile" = release ]; then cargo build --release -p corral-cli --quiet; else cargo build -p corral-cli --quiet; fi
cli=${CARGO_TARGET_DIR:-$PWD/target}/$profile/corral-cli
work=$(mktemp -d)
sshd_pid=
trap '[ -n "$sshd_pid" ] && kill "$sshd_pid"; rm -rf "$work"' EXIT
mkdir -p "$work/project" "$work/cache" "$work/data"
echo "hello" > "$work/project/a.txt"
ssh-keygen -q -t ed25519 -N "" -f "$work/host_key"
ssh-keygen -q -t ed25519 -N "" -f "$work/user_key"
cp "$work/user_key.pub" "$work/authorized_keys"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat > "$work/sshd_config" <<CONF
Port $port
ListenAddress 127.0.0.1
HostKey $work/host_key
PidFile $work/sshd.pid
AuthorizedKeysFile $work/authorized_keys
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
LogLevel ERROR
SetEnv XDG_CACHE_HOME=$work/cache XDG_DATA_HOME=$work/data
CONF
echo "[127.0.0.1]:$port $(cat "$work/host_key.pub")" > "$work/known_hosts"
cat > "$work/ssh_config" <<CONF
Host corral-bench
  HostName 127.0.0.1
  Port $port
  User $(id -un)
  IdentityFile $work/user_key
  IdentitiesOnly yes
  UserKnownHostsFile $work/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
CONF
[ "$(id -u)" -eq 0 ] && mkdir -p /run/sshd
/usr/sbin/sshd -D -e -f "$work/sshd_config" 2> /dev/null &
sshd_pid=$!
until python3 -c "import socket; socket.create_connection(('127.0.0.1', $port))" 2> /dev/null; do sleep 0.05; done
export CORRAL_SSH_CONFIG=$work/ssh_config XDG_DATA_HOME=$work/data

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

local_call=("$cli" call --root "$work/project" --no-lsp --no-checkpoint read_file '{"path":"a.txt"}')
remote_call=("$cli" call --root "ssh://corral-bench$work/project" --no-lsp --no-checkpoint read_file '{"path":"a.txt"}')
"${local_call[@]}" > /dev/null
"${remote_call[@]}" --install-remote > /dev/null
local_ms=$(median_ms "${local_call[@]}")
remote_ms=$(median_ms "${remote_call[@]}")
echo "read_file, local root:          ${local_ms} ms (median of $runs, $profile)"
echo "read_file, ssh:// on loopback:  ${remote_ms} ms (median of $runs, $profile)"
awk -v a="$remote_ms" -v b="$local_ms" 'BEGIN {printf "ssh over local:                 %.1f ms\n", a - b}'

# The long-lived session: requests on one open channel.
session_ms() { # command...
  python3 - "$runs" "$@" <<'PY'
import json, subprocess, sys, time
runs, command = int(sys.argv[1]), sys.argv[2:]
serve = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
first = serve.stdout.readline()
if "ready" not in json.loads(first):
    sys.exit(f"serve did not start: {first}")
times = []
for n in range(runs + 1):
    request = {"id": n, "command": "call_tool", "args": {"name": "read_file", "input": {"path": "a.txt"}}}
    start = time.perf_counter()
    serve.stdin.write(json.dumps(request) + "\n")
    serve.stdin.flush()
    answer = json.loads(serve.stdout.readline())
    if "ok" not in answer:
        sys.exit(f"the call failed: {answer}")
    if n:  # the first warms the session
        times.append((time.perf_counter() - start) * 1000)
serve.stdin.close()
serve.wait()
times.sort()
print(f"{times[len(times) // 2]:.2f}")
PY
}

serve_flags=(--root "$work/project" --mode full_auto --no-lsp --no-checkpoint)
version=$("$cli" --version | awk '{print $2}')
local_serve_ms=$(session_ms "$cli" serve "${serve_flags[@]}")
remote_serve_ms=$(session_ms ssh -T -o BatchMode=yes -F "$work/ssh_config" corral-bench \
  "$work/cache/corral/bin/corral-cli-$version" serve "${serve_flags[@]}")
echo "read_file, serve here:          ${local_serve_ms} ms (median of $runs)"
echo "read_file, serve over ssh:      ${remote_serve_ms} ms (median of $runs)"
awk -v a="$remote_serve_ms" -v b="$local_serve_ms" 'BEGIN {printf "session over local:             %.2f ms\n", a - b}'
