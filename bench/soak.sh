#!/usr/bin/env bash
# A memory soak: the release app in its own window under Xvfb, driven for a
# bounded time through the e2e harness (bench/soak.test.js: a long
# conversation with edits and commands approved in the window, summaries in
# an 8,192-token window, new conversations, older ones opened again,
# tasks), against the scripted model server. Once a minute the PSS of the
# whole process tree (the app and its WebKit processes, from
# /proc/PID/smaps_rollup, as bench/startup.sh measures it) is written to a
# CSV; bench/soak-report.py then draws it as an SVG, prints the figures and
# checks the rule: after the warm-up the memory is flat, less than 5% of
# growth over the last half of the run. Exits non-zero when the rule is
# broken or the driver failed.
#
# Usage: bench/soak.sh [--minutes N] [--out DIR] [--no-build]
#   --minutes N   how long to drive the window (default 60)
#   --out DIR     where the CSV, the SVG, the log and the screenshots go
#                 (default /tmp/corral-soak-DATE-TIME; must not exist or be empty)
#   --no-build    use the release app already built
set -euo pipefail
cd "$(dirname "$0")/.."

minutes=60
out=""
build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes=${2:?--minutes needs a number}; shift 2 ;;
    --minutes=*) minutes=${1#*=}; shift ;;
    --out) out=${2:?--out needs a folder}; shift 2 ;;
    --out=*) out=${1#*=}; shift ;;
    --no-build) build=""; shift ;;
    -h | --help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "soak: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$minutes" in
  '' | *[!0-9]* | 0) echo "soak: --minutes wants a whole number of minutes, 1 or more" >&2; exit 2 ;;
esac
out=$(realpath -m "${out:-/tmp/corral-soak-$(date +%Y%m%d-%H%M%S)}")
if [ -e "$out" ] && [ -n "$(ls -A "$out" 2>/dev/null)" ]; then
  echo "soak: $out is not empty; choose another --out" >&2
  exit 2
fi
mkdir -p "$out"

if [ -n "$build" ]; then
  (cd ui && npm run build --silent >/dev/null)
  cargo build --release -p corral --quiet
fi
target=$(cd "${CARGO_TARGET_DIR:-target}" && pwd)
app="$target/release/corral"
[ -x "$app" ] || { echo "soak: $app is missing; run without --no-build" >&2; exit 1; }

# Every process under PID, PID first.
tree_pids() {
  local pid=$1 child
  echo "$pid"
  for child in $(pgrep -P "$pid" 2>/dev/null); do tree_pids "$child"; done
}

# One row: the tree's PSS split into the app, its WebKit web and network
# processes and anything else under it (the commands the agent runs, while
# they run), in MiB; the tree's RSS; its processes; then what the driver had
# done by then (its progress line).
sample() {
  local pid=$1 minute=$2 seconds=$3 p comm pss rss
  local app=0 web=0 net=0 other=0 rss_all=0 count=0
  for p in $(tree_pids "$pid"); do
    comm=$(cat "/proc/$p/comm" 2>/dev/null) || continue
    read -r pss rss < <(awk '$1 == "Pss:" {p = $2} $1 == "Rss:" {r = $2} END {print p + 0, r + 0}' "/proc/$p/smaps_rollup" 2>/dev/null || echo "0 0")
    [ "${pss:-0}" -gt 0 ] || continue # ended, or a zombie
    count=$((count + 1))
    rss_all=$((rss_all + rss))
    if [ "$p" = "$pid" ]; then
      app=$((app + pss))
    else
      case "$comm" in
        WebKitWebProces*) web=$((web + pss)) ;;
        WebKitNetworkPr*) net=$((net + pss)) ;;
        *) other=$((other + pss)) ;;
      esac
    fi
  done
  local progress
  progress=$(tr ' ' ',' <"$out/progress" 2>/dev/null || true)
  awk -v m="$minute" -v s="$seconds" -v a="$app" -v w="$web" -v n="$net" -v o="$other" -v r="$rss_all" -v c="$count" -v g="$progress" \
    'BEGIN { printf "%d,%d,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%d,%s\n", m, s, (a + w + n) / 1024, a / 1024, w / 1024, n / 1024, o / 1024, r / 1024, c, g }'
}

now_ms() { date +%s%3N; }

# Waits for the driver's app.pid (the app's process id and the moment the
# soak's clock started), then takes a row at each whole minute from 0 to
# $minutes, or until the app is gone.
sampler() {
  local csv="$out/pss.csv" pid t0 k target wait_ms
  echo "minute,seconds,pss_mib,app_mib,web_mib,network_mib,other_mib,rss_mib,processes,tool_calls,tool_results,approvals,messages,summaries,conversations,switches,tasks,over_window,dom_nodes" >"$csv"
  until [ -s "$out/app.pid" ]; do
    kill -0 "$driver" 2>/dev/null || return 0
    sleep 0.5
  done
  read -r pid t0 <"$out/app.pid"
  for k in $(seq 0 "$minutes"); do
    target=$((t0 + k * 60000))
    wait_ms=$((target - $(now_ms)))
    if [ "$wait_ms" -gt 0 ]; then sleep "$((wait_ms / 1000)).$(printf '%03d' $((wait_ms % 1000)))"; fi
    [ -r "/proc/$pid/smaps_rollup" ] || { echo "soak: the app (process $pid) ended before minute $k" >&2; return 0; }
    sample "$pid" "$k" "$((($(now_ms) - t0) / 1000))" >>"$csv"
    tail -n 1 "$csv" | awk -F, '{ printf "soak: minute %d: %s MiB (app %s, web %s, network %s; commands %s); %s tool calls, %s messages, %s summaries\n", $1, $3, $4, $5, $6, $7, $10, $13, $14 }'
  done
}

echo "soak: $minutes minutes, the app $app, writing to $out"
echo "soak: the commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$( [ -n "$(git status --porcelain 2>/dev/null)" ] && echo ' (with changes not committed)')"
CORRAL_E2E_APP="$app" CORRAL_E2E_SKIP_BUILD=1 CORRAL_E2E_ARTIFACTS="$out/artifacts" \
  SOAK_MINUTES="$minutes" SOAK_OUT="$out" scripts/e2e.sh bench/soak.test.js >"$out/driver.log" 2>&1 &
driver=$!
sampler_pid=""
# Interrupted: the sampler, then the driver's processes (the test's own
# handler then stops tauri-driver, which closes the app).
stop() {
  local p
  if [ -n "$sampler_pid" ]; then kill "$sampler_pid" 2>/dev/null || true; fi
  for p in $(tree_pids "$driver"); do kill -TERM "$p" 2>/dev/null || true; done
}
trap 'stop; exit 130' INT TERM
sampler &
sampler_pid=$!
driver_rc=0
wait "$driver" || driver_rc=$?
wait "$sampler_pid" 2>/dev/null || true
trap - INT TERM
if [ "$driver_rc" -ne 0 ]; then
  echo "soak: the driver failed (exit $driver_rc); its log: $out/driver.log" >&2
  tail -n 40 "$out/driver.log" >&2
fi
grep -E '^soak: ' "$out/driver.log" || true

report_rc=0
python3 bench/soak-report.py "$out/pss.csv" "$out/soak.svg" --minutes "$minutes" || report_rc=$?
echo "soak: the CSV $out/pss.csv, the plot $out/soak.svg"
if [ "$driver_rc" -ne 0 ]; then exit "$driver_rc"; fi
exit "$report_rc"
