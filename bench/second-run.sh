#!/usr/bin/env bash
# scripts/run.sh twice with nothing changed in between, each to the
# window's loaded page (the app's `corral-ready` probe, as in startup.sh),
# under Xvfb. The first run builds whatever is not built yet; the second is
# the figure: setup's checks, build-ui's hash, cargo's no-op check of the
# release build, and start-up.
# Usage: bench/second-run.sh   (starts a private Xvfb when DISPLAY is unset)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${DISPLAY:-}" ]; then exec xvfb-run -a "$0" "$@"; fi

project=$(mktemp -d)
state=$(mktemp -d)
echo 'fn main() {}' >"$project/main.rs"

# Milliseconds from starting scripts/run.sh to the window's loaded page.
to_window() { # timeout in seconds
  local out start pid waited=0
  out=$(mktemp)
  start=$(date +%s%N)
  # No session bus: this app must not hand its folder to one already running.
  env -u DBUS_SESSION_BUS_ADDRESS XDG_CONFIG_HOME="$state/config" XDG_DATA_HOME="$state/data" \
    CORRAL_NO_KEYCHAIN=1 CORRAL_STARTUP_PROBE=1 scripts/run.sh "$project" >"$out" 2>"$out.log" &
  pid=$!
  until grep -q corral-ready "$out"; do
    if ! kill -0 "$pid" 2>/dev/null || [ "$waited" -ge $(($1 * 50)) ]; then
      echo "second-run: no window (see $out.log)" >&2
      kill "$pid" 2>/dev/null || true
      exit 1
    fi
    sleep 0.02
    waited=$((waited + 1))
  done
  echo $((($(date +%s%N) - start) / 1000000))
  # run.sh ends in `exec`, so $pid is the app itself.
  kill -TERM "$pid"
  wait "$pid" 2>/dev/null || true
}

echo "first run (builds what is not built): $(to_window 3600) ms"
echo "second run, nothing changed: $(to_window 120) ms"
