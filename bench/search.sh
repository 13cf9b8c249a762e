#!/usr/bin/env bash
# search_files against ripgrep, on the same large real tree and queries.
#
#   bench/search.sh            # prepare the tree once, build, check, time
#
# The tree is the sources of every crate in the local cargo registry, copied
# COPIES times into bench/work/tree (bench/work is gitignored). It is not a
# git repository, so ripgrep runs with --no-require-git, which is what
# search_files does everywhere. Both tools start a process per query;
# corral-cli's time includes its JSON output.
#
# Then the same queries with the trigram index (`call --index DIR`): the
# index's build time and size, a check that the indexed results are the
# same as the plain ones, and the three timed side by side.
#
# Environment: COPIES (default 5), RUNS (default 10), WARMUP (default 3),
# INDEXED_ONLY (1: time only the two indexed tables), LIVE_ONLY (1: time
# only the live index's table).
set -euo pipefail

cd "$(dirname "$0")/.."
REPO=$PWD
WORK=$REPO/bench/work
TREE=$WORK/tree
COPIES=${COPIES:-5}
RUNS=${RUNS:-10}
WARMUP=${WARMUP:-3}
CLI=${CARGO_TARGET_DIR:-$REPO/target}/release/corral-cli

as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"
    elif command -v sudo >/dev/null; then sudo "$@"
    else return 1
    fi
}

if ! command -v rg >/dev/null; then
    as_root apt-get install -y ripgrep
fi
for tool in jq bc; do
    command -v "$tool" >/dev/null || as_root apt-get install -y "$tool"
done

# --- the tree -------------------------------------------------------------
if [ ! -f "$WORK/tree.ready" ] || [ "$(cat "$WORK/tree.ready")" != "$COPIES" ]; then
    echo "preparing $TREE ($COPIES copies of the cargo registry sources)..."
    rm -rf "$TREE"
    mkdir -p "$TREE"
    for i in $(seq 1 "$COPIES"); do
        mkdir "$TREE/copy$i"
        for src in "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/; do
            cp -r "$src." "$TREE/copy$i/"
        done
    done
    echo "$COPIES" >"$WORK/tree.ready"
fi
files=$(find "$TREE" -type f | wc -l)
size=$(du -sh "$TREE" | cut -f1)
echo "tree: $files files, $size; $(nproc) cores; $(rg --version | sed -n 1p)"

# --- the binary -----------------------------------------------------------
cargo build --release -p corral-cli >/dev/null 2>&1 || cargo build --release -p corral-cli
echo "corral-cli: $CLI"

# --- queries: name, search_files input, ripgrep flags and pattern ----------
# Rare enough that all matches fit under the cap of 1000, so both tools must
# return exactly the same (path, line) set.
names=(literal regex case_insensitive)
inputs=(
    '{"query":"SAFETY: the caller","regex":false,"max_results":1000}'
    '{"query":"fn [a-z_]+_utf8_lossy\\(","max_results":1000}'
    '{"query":"deprecated since","case_insensitive":true,"max_results":1000}'
)
rg_flags=(-F '' -i)
rg_patterns=(
    'SAFETY: the caller'
    'fn [a-z_]+_utf8_lossy\('
    'deprecated since'
)
capped_input='{"query":"fn ","max_results":100}'

corral() { "$CLI" call --root "$TREE" search_files "$1"; }
INDEX=$WORK/index
corral_indexed() { "$CLI" call --root "$TREE" --index "$INDEX" search_files "$1"; }
# ripgrep with the flags and pattern of query number $1.
ripgrep() {
    # shellcheck disable=SC2086 # the flags are words
    (cd "$TREE" && rg --no-require-git -n --no-heading --color never ${rg_flags[$1]} -e "${rg_patterns[$1]}" ./)
}

# --- same matches -----------------------------------------------------------
echo
echo "checking that both return the same matches..."
for i in "${!names[@]}"; do
    out=$(corral "${inputs[$i]}")
    if [ "$(jq -r .truncated <<<"$out")" != false ]; then
        echo "FAIL ${names[$i]}: truncated; pick a rarer query" >&2
        exit 1
    fi
    jq -r '.matches[] | "\(.path):\(.line)"' <<<"$out" | sort >"$WORK/corral.${names[$i]}"
    ripgrep "$i" | cut -d: -f1,2 | sed 's#^\./##' | sort >"$WORK/rg.${names[$i]}"
    n=$(wc -l <"$WORK/rg.${names[$i]}")
    if cmp -s "$WORK/corral.${names[$i]}" "$WORK/rg.${names[$i]}"; then
        echo "  ${names[$i]}: same $n matches"
    else
        echo "FAIL ${names[$i]}: the matches differ:" >&2
        diff "$WORK/corral.${names[$i]}" "$WORK/rg.${names[$i]}" | head -20 >&2
        exit 1
    fi
done

elapsed_ns() {
    local t0
    t0=$(date +%s%N)
    "$@" >/dev/null 2>&1
    echo $(($(date +%s%N) - t0))
}
median_ms() { sort -n | awk '{a[NR]=$1} END {m = NR % 2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2; printf "%.1f", m/1e6}'; }

# INDEXED_ONLY=1 skips this plain-vs-ripgrep timing (the indexed table
# below times all three anyway).
if [ "${INDEXED_ONLY:-0}" != 1 ] && [ "${LIVE_ONLY:-0}" != 1 ]; then
# --- timing -------------------------------------------------------------------
# Runs alternate (corral, rg, corral, rg...) so that both see the same noise
# from whatever else the machine is doing; the medians are compared.
echo
echo "timing: median of $RUNS interleaved runs after $WARMUP warm-up runs"
printf '%-18s %12s %12s %8s\n' query corral_ms rg_ms ratio
for i in "${!names[@]}"; do
    for _ in $(seq 1 "$WARMUP"); do corral "${inputs[$i]}" >/dev/null; ripgrep "$i" >/dev/null; done
    : >"$WORK/t.corral"
    : >"$WORK/t.rg"
    for _ in $(seq 1 "$RUNS"); do
        elapsed_ns corral "${inputs[$i]}" >>"$WORK/t.corral"
        elapsed_ns ripgrep "$i" >>"$WORK/t.rg"
    done
    c=$(median_ms <"$WORK/t.corral")
    r=$(median_ms <"$WORK/t.rg")
    printf '%-18s %12s %12s %8.2f\n' "${names[$i]}" "$c" "$r" "$(echo "$c / $r" | bc -l)"
done
for _ in $(seq 1 "$WARMUP"); do corral "$capped_input" >/dev/null; done
: >"$WORK/t.corral"
for _ in $(seq 1 "$RUNS"); do elapsed_ns corral "$capped_input" >>"$WORK/t.corral"; done
printf '%-18s %12s %12s %8s\n' "capped: fn , 100" "$(median_ms <"$WORK/t.corral")" - -
fi

# --- with the index ------------------------------------------------------------
if [ "${LIVE_ONLY:-0}" != 1 ]; then
echo
rm -rf "$INDEX"
t0=$(date +%s%N)
corral_indexed "${inputs[0]}" >/dev/null
build_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
echo "index: built in $build_ms ms (first indexed query included), $(du -sh "$INDEX" | cut -f1) on disk"
echo "checking that indexed and plain searches return the same output..."
for i in "${!names[@]}"; do
    out=$(corral_indexed "${inputs[$i]}")
    if [ "$(jq -r .indexed <<<"$out")" != true ]; then
        echo "FAIL ${names[$i]}: the index was not used" >&2
        exit 1
    fi
    if [ "$(jq -c 'del(.indexed)' <<<"$out")" = "$(corral "${inputs[$i]}" | jq -c 'del(.indexed)')" ]; then
        echo "  ${names[$i]}: same output"
    else
        echo "FAIL ${names[$i]}: indexed and plain outputs differ" >&2
        exit 1
    fi
done
echo
echo "timing: median of $RUNS interleaved runs after $WARMUP warm-up runs"
printf '%-18s %12s %12s %12s\n' query indexed_ms plain_ms rg_ms
for i in "${!names[@]}"; do
    for _ in $(seq 1 "$WARMUP"); do corral_indexed "${inputs[$i]}" >/dev/null; done
    : >"$WORK/t.indexed"
    : >"$WORK/t.corral"
    : >"$WORK/t.rg"
    for _ in $(seq 1 "$RUNS"); do
        elapsed_ns corral_indexed "${inputs[$i]}" >>"$WORK/t.indexed"
        elapsed_ns corral "${inputs[$i]}" >>"$WORK/t.corral"
        elapsed_ns ripgrep "$i" >>"$WORK/t.rg"
    done
    printf '%-18s %12s %12s %12s\n' "${names[$i]}" "$(median_ms <"$WORK/t.indexed")" \
        "$(median_ms <"$WORK/t.corral")" "$(median_ms <"$WORK/t.rg")"
done
fi

# --- with a live index, in a long-lived process ----------------------------------
# What the app and `corral-cli mcp` do: the index is kept true by a watch, so
# a query opens only the files the index names. Timed over MCP in one server
# process (what an agent talks to all day) against a ripgrep process per query.
echo
LIVE_INDEX=$WORK/live-index
rm -rf "$LIVE_INDEX"
jq -n \
    --arg l0 "${inputs[0]}" --arg l1 "${inputs[1]}" --arg l2 "${inputs[2]}" \
    --arg capped "$capped_input" \
    --arg p0 "${rg_patterns[0]}" --arg p1 "${rg_patterns[1]}" --arg p2 "${rg_patterns[2]}" \
    '[{name: "literal", input: ($l0 | fromjson), rg: ["-F", $p0]},
      {name: "regex", input: ($l1 | fromjson), rg: ["", $p1]},
      {name: "case_insensitive", input: ($l2 | fromjson), rg: ["-i", $p2]},
      {name: "capped: fn , 100", input: ($capped | fromjson), rg: ["-F", "fn "], cap: 100}]' \
    >"$WORK/live-queries.json"
python3 bench/search_live.py "$CLI" "$TREE" "$LIVE_INDEX" "$RUNS" "$WARMUP" "$WORK/live-queries.json"
