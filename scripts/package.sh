#!/usr/bin/env bash
# Builds Corral's .deb and .rpm, offline once the tools are installed:
# the app as /usr/bin/corral, corral-cli, a desktop entry, hicolor icons,
# AppStream metainfo and man pages (docs/packaging.md lists them); and
# corral-cli's own .deb (headless: servers, task images).
#
#   scripts/package.sh                  # release build (slow the first time)
#   scripts/package.sh --profile dev    # the debug build the e2e suite makes
#   scripts/package.sh --out DIR        # where the packages go (default:
#                                       # $CARGO_TARGET_DIR/packages)
#
# The packages are made by cargo-deb and cargo-generate-rpm (pinned below,
# installed with `cargo install --locked`) from the metadata in
# src-tauri/Cargo.toml; the desktop entry and the metainfo are validated
# first (desktop-file-validate, appstreamcli).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

CARGO_DEB_VERSION=3.8.0
CARGO_GENERATE_RPM_VERSION=0.21.1

profile=release
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --profile) profile=${2:?--profile needs dev or release}; shift 2 ;;
    --out) out=${2:?--out needs a folder}; shift 2 ;;
    -h | --help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "package: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$profile" in
  dev) profile_dir=debug ;;
  release) profile_dir=release ;;
  *) echo "package: --profile is dev or release, not $profile" >&2; exit 2 ;;
esac
target=$(realpath -m "${CARGO_TARGET_DIR:-target}")
out=$(realpath -m "${out:-$target/packages}")

step() { printf 'package [%3ds] %s\n' "$SECONDS" "$*" >&2; }

step "system packages"
scripts/setup.sh
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
# Validators, man pages from --help, the icon scaler (Pillow), and
# dpkg-shlibdeps (dpkg-dev) for the .deb's library dependencies.
tools=(desktop-file-utils appstream help2man python3-pil dpkg-dev)
missing=()
for pkg in "${tools[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "package: installing ${missing[*]}" >&2
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The packagers, at their pinned versions (built in a folder of their own,
# so they never share the project's target folder).
install_tool() { # crate version command
  if ! "$3" --version 2>/dev/null | grep -qF "$2"; then
    step "cargo install $1 $2"
    CARGO_TARGET_DIR="$target/package-tools" cargo install "$1" --version "$2" --locked --quiet
  fi
}
install_tool cargo-deb "$CARGO_DEB_VERSION" cargo-deb
install_tool cargo-generate-rpm "$CARGO_GENERATE_RPM_VERSION" cargo-generate-rpm

step "checking the desktop entry and the AppStream metainfo"
desktop-file-validate packaging/dev.corral.desktop.desktop
appstreamcli validate --no-net --pedantic packaging/dev.corral.desktop.metainfo.xml

step "building the UI and the binaries ($profile)"
scripts/build-ui.sh
cargo build --profile "$profile" -p corral -p corral-cli --locked

# What the metadata's `target/release/package/` sources name.
generated="$target/$profile_dir/package"
rm -rf "$generated"
step "icons and man pages"
/usr/bin/python3 packaging/icons.py icons/icon.png "$generated/hicolor" >/dev/null
mkdir -p "$generated/man"
man_page() { # binary, what it is
  help2man --no-info --section 1 --name "$2" "$target/$profile_dir/$1" >"$generated/man/$1.1"
  gzip -9nf "$generated/man/$1.1"
}
man_page corral "a desktop coding agent confined to one project folder"
man_page corral-cli "Corral without its window: exec, acp, mcp, serve, call, task, checkpoint"

mkdir -p "$out"
step "the .deb (cargo-deb)"
# cargo-deb warns that a dev profile is not for releases; that is the point
# of --profile dev (the install test of a debug build).
cargo deb -p corral --no-build --profile "$profile" --output "$out" --fast --quiet
# The headless one: corral-cli alone, for servers and task images.
cargo deb -p corral-cli --no-build --profile "$profile" --output "$out" --fast --quiet
step "the .rpm (cargo-generate-rpm)"
cargo generate-rpm -p src-tauri --profile "$profile" --target-dir "$target" --output "$out"

step "done"
ls -1 "$out"/*.deb "$out"/*.rpm
