#!/usr/bin/env bash
# Cold start to a loaded window, and idle memory of the whole process tree
# (the app and its WebKit processes), under Xvfb; and in the same run the
# floor: a blank WebKitGTK window with the same rendering switches
# (bench/floor-window.py), started and measured the same way.
# Usage: bench/startup.sh [RUNS]   (default 5; builds the release app first)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
scripts/setup.sh >/dev/null
# The floor window's bindings (GTK and WebKitGTK 4.1 for Python).
missing=()
for pkg in python3-gi gir1.2-webkit2-4.1; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
(cd ui && npm run build --silent >/dev/null)
cargo build --release -p corral --quiet
app=${CARGO_TARGET_DIR:-$PWD/target}/release/corral
project=$(mktemp -d)
home=$(mktemp -d)
echo 'fn main() {}' > "$project/main.rs"

# Sum a value over a process and all its descendants.
tree_pids() {
  local pid=$1
  echo "$pid"
  for child in $(pgrep -P "$pid" 2>/dev/null); do tree_pids "$child"; done
}
tree_kib() { # field: Pss or Rss (from smaps_rollup)
  local total=0 pid v
  for pid in $(tree_pids "$1"); do
    v=$(awk -v f="$2:" '$1 == f {print $2}' "/proc/$pid/smaps_rollup" 2>/dev/null || echo 0)
    total=$((total + ${v:-0}))
  done
  echo "$total"
}

alive() { # running, not a zombie
  local state
  state=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}

run_once() { # app|floor
  local start_ns ready_ns pid out ready
  out=$(mktemp)
  start_ns=$(date +%s%N)
  if [ "$1" = app ]; then
    ready=corral-ready
    HOME=$home XDG_CONFIG_HOME=$home/config XDG_DATA_HOME=$home/data CORRAL_STARTUP_PROBE=1 \
      "$app" "$project" >"$out" 2>/dev/null &
  else
    ready=floor-ready
    HOME=$home /usr/bin/python3 bench/floor-window.py >"$out" 2>/dev/null &
  fi
  pid=$!
  for _ in $(seq 1 2000); do
    grep -q "$ready" "$out" && break
    sleep 0.005
  done
  ready_ns=$(date +%s%N)
  grep -q "$ready" "$out" || { echo "the $1 window did not become ready" >&2; kill "$pid"; exit 1; }
  sleep 3 # idle
  echo "$(( (ready_ns - start_ns) / 1000000 )) $(tree_kib "$pid" Pss) $(tree_kib "$pid" Rss) $(tree_pids "$pid" | wc -l)"
  local pids; pids=$(tree_pids "$pid")
  kill -TERM "$pid"; wait "$pid" 2>/dev/null || true
  # The WebKit processes see the app gone and end within moments. (Where
  # nothing reaps orphans, as in some containers, they stay as zombies:
  # ended, so not counted.)
  local left=""
  for _ in $(seq 1 50); do
    left=""
    for p in $pids; do alive "$p" && left="$left $p"; done
    [ -z "$left" ] && break
    sleep 0.1
  done
  if [ -n "$left" ]; then echo "processes outlived the app by 5 s:$left" >&2; exit 1; fi
  rm -f "$out"
}

main() {
  echo "run  ready_ms  pss_mib  rss_mib  processes  floor_ms  floor_pss  floor_rss  pss/floor"
  local ratios=()
  for i in $(seq 1 "$runs"); do
    local out floor
    out=$(run_once app) || exit 1
    floor=$(run_once floor) || exit 1
    read -r ms pss rss n <<<"$out"
    read -r fms fpss frss _ <<<"$floor"
    ratios+=("$(awk -v a="$pss" -v b="$fpss" 'BEGIN { printf "%.2f", a / b }')")
    printf "%3d  %8d  %7d  %7d  %9d  %8d  %9d  %9d  %9s\n" "$i" "$ms" $((pss / 1024)) $((rss / 1024)) "$n" \
      "$fms" $((fpss / 1024)) $((frss / 1024)) "${ratios[-1]}"
  done
  echo "median PSS against the floor: $(printf '%s\n' "${ratios[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')x"
}

if [ -z "${DISPLAY:-}" ]; then
  exec xvfb-run -a "$0" "$@"
fi
main
rm -rf "$project" "$home"
