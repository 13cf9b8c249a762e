#!/usr/bin/env bash
# The image a task's session runs in when its place is a container
# (`corral-cli exec --container IMAGE`): a minimal Debian of this machine's
# release, made by mmdebstrap from Debian's own packages (git, make,
# bubblewrap, ca-certificates), with this build's corral-cli as /usr/bin/corral-cli.
# Nothing is fetched when the image runs.
#
#   scripts/image.sh                         # target/debug/corral-cli, podman
#   scripts/image.sh --cli PATH --engine docker --tag NAME
#   scripts/image.sh --deb corral-cli_VERSION_ARCH.deb   # from the package
#
# Prints the image's name. The Debian root is made once and kept as a
# tarball in $CARGO_TARGET_DIR/image/ (remove it for a fresh one); each run
# adds the binary to a copy and imports it. With --deb (the headless
# package scripts/package.sh makes), mmdebstrap installs that package with
# its dependencies into a root of its own instead, as apt would on a
# server. A project's own toolchain goes in an image built FROM this one,
# or is chosen as the tasks' toolchain (corral-cli is then added to it).
set -euo pipefail
cd "$(dirname "$0")/.."

cli=${CARGO_TARGET_DIR:-target}/debug/corral-cli
engine=podman
tag=""
deb=""
while [ $# -gt 0 ]; do
  case "$1" in
    --cli) cli=${2:?--cli needs a path}; shift 2 ;;
    --engine) engine=${2:?--engine needs podman or docker}; shift 2 ;;
    --tag) tag=${2:?--tag needs a name}; shift 2 ;;
    --deb) deb=$(realpath "${2:?--deb needs a file}"); shift 2 ;;
    -h | --help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "image: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
if [ -n "$deb" ]; then
  [ -f "$deb" ] || { echo "image: no package at $deb" >&2; exit 1; }
  version=$(dpkg-deb --field "$deb" Version)
  [ "$(dpkg-deb --field "$deb" Package)" = corral-cli ] ||
    { echo "image: $deb is not corral-cli's package (scripts/package.sh makes it)" >&2; exit 1; }
else
  [ -x "$cli" ] || { echo "image: no corral-cli at $cli (cargo build -p corral-cli)" >&2; exit 1; }
  version=$("$cli" --version | awk '{print $2}')
fi
tag=${tag:-corral-task:$version}
command -v mmdebstrap >/dev/null || { echo "image: mmdebstrap is missing (scripts/setup.sh --test installs it)" >&2; exit 1; }
command -v "$engine" >/dev/null || { echo "image: $engine is missing" >&2; exit 1; }

cache=$(realpath -m "${CARGO_TARGET_DIR:-target}")/image
suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
mkdir -p "$cache"
if [ -n "$deb" ]; then
  work=$(mktemp -d "$cache/build.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  echo "image: installing $(basename "$deb") and its dependencies in a minimal Debian $suite root" >&2
  # The package's own dependencies (git, bubblewrap...) come with it.
  mmdebstrap --variant=minbase --include=ca-certificates,make --include="$deb" \
    --hook-dir=/usr/share/mmdebstrap/hooks/file-mirror-automount \
    "$suite" "$work/root.tar"
  "$engine" import --quiet --change 'CMD ["corral-cli", "--version"]' "$work/root.tar" "$tag" >/dev/null
  echo "$tag"
  exit 0
fi
base="$cache/$suite-base.tar"
mkdir -p "$cache"
# One maker of the root at a time (tests make images side by side).
exec 9>"$cache/$suite-base.lock"
flock 9
if [ ! -f "$base" ]; then
  echo "image: making a minimal Debian $suite root (mmdebstrap, once)" >&2
  mmdebstrap --quiet --variant=minbase --include=git,bubblewrap,ca-certificates,make \
    "$suite" "$cache/$suite-base.part.tar"
  mv "$cache/$suite-base.part.tar" "$base"
fi
flock -u 9

work=$(mktemp -d "$cache/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp "$base" "$work/root.tar"
mkdir -p "$work/add/usr/bin"
cp "$cli" "$work/add/usr/bin/corral-cli"
tar -C "$work/add" --owner=0 --group=0 -rf "$work/root.tar" ./usr/bin/corral-cli
"$engine" import --quiet --change 'CMD ["corral-cli", "--version"]' "$work/root.tar" "$tag" >/dev/null
echo "$tag"
