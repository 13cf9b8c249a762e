#!/usr/bin/env bash
# Builds the UI into ui/dist only when its sources changed, and touches no
# file of ui/dist whose bytes stay the same.
#
# The app embeds every file of ui/dist with `include_bytes!` (through
# `tauri::generate_context!`), so Cargo recompiles it when any of them is
# newer than the last build. A plain `vite build` empties and rewrites the
# folder, which cost a recompile of the app on every run. Here the build
# goes to a fresh folder, and only files that differ are copied over (and
# files no longer built are removed).
#
# Usage: scripts/build-ui.sh [--force]
set -euo pipefail
cd "$(dirname "$0")/../ui"

# What the build reads. A change to any of these, or a missing ui/dist,
# means a build.
sources=(src index.html package.json package-lock.json vite.config.ts svelte.config.js tsconfig.json)
stamp=node_modules/.corral-dist-stamp

sources_hash() {
  find "${sources[@]}" -type f -print0 | LC_ALL=C sort -z |
    xargs -0 sha256sum | sha256sum | cut -d' ' -f1
}

hash=$(sources_hash)
if [ "${1:-}" != "--force" ] && [ -f dist/index.html ] && [ "$(cat "$stamp" 2>/dev/null)" = "$hash" ]; then
  echo "build-ui: ui/dist is up to date"
  exit 0
fi

fresh=$(mktemp -d "${TMPDIR:-/tmp}/corral-ui-dist.XXXXXX")
trap 'rm -rf "$fresh"' EXIT
npx vite build --logLevel warn --outDir "$fresh" --emptyOutDir

mkdir -p dist
changed=0
# Copy what is new or different; leave identical files (and their mtimes) alone.
while IFS= read -r -d '' file; do
  rel=${file#"$fresh"/}
  if ! cmp -s "$file" "dist/$rel"; then
    mkdir -p "$(dirname "dist/$rel")"
    cp "$file" "dist/$rel"
    changed=$((changed + 1))
  fi
done < <(find "$fresh" -type f -print0)
# Remove what the build no longer makes.
while IFS= read -r -d '' file; do
  rel=${file#dist/}
  if [ ! -e "$fresh/$rel" ]; then
    rm -f "$file"
    changed=$((changed + 1))
  fi
done < <(find dist -type f -print0)
find dist -mindepth 1 -type d -empty -delete

echo "$hash" >"$stamp"
echo "build-ui: $changed file(s) of ui/dist changed"
