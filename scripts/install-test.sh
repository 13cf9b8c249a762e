#!/usr/bin/env bash
# The install test: Corral's .deb installed into a clean Debian root (made by
# mmdebstrap from Debian's own packages), apt resolving its dependencies;
# then /usr/bin/corral is started under Xvfb inside that root and must stay
# up and show its window, and `corral-cli --version` must answer. Then, with
# Podman, the task image is made from corral-cli's own .deb
# (scripts/image.sh --deb) and its corral-cli, the package's, must answer
# and serve a call in a container.
#
#   scripts/install-test.sh                  # packages the release build first
#   scripts/install-test.sh --profile dev    # the debug build (as the e2e suite's)
#   scripts/install-test.sh --deb FILE       # an existing .deb
#
# Needs root (chroot, mounts) and the Debian archive. The clean root is made
# once and kept as a tarball in $CARGO_TARGET_DIR/install-test/ (remove it
# to make a fresh one); downloaded packages are kept beside it. Each run
# unpacks the tarball into a new folder, so every install starts clean.
set -euo pipefail
cd "$(dirname "$0")/.."

profile=release
deb=""
while [ $# -gt 0 ]; do
  case "$1" in
    --profile) profile=${2:?--profile needs dev or release}; shift 2 ;;
    --deb) deb=$(realpath "${2:?--deb needs a file}"); shift 2 ;;
    -h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install-test: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "install-test: needs root (chroot and mounts); run it with sudo" >&2; exit 1; }

step() { printf 'install-test [%3ds] %s\n' "$SECONDS" "$*" >&2; }

target=$(realpath -m "${CARGO_TARGET_DIR:-target}")
if [ -z "$deb" ]; then
  scripts/package.sh --profile "$profile" --out "$target/install-test/packages"
  deb=$(ls -t "$target"/install-test/packages/corral_*.deb | head -n 1)
fi
cli_deb=$(ls -t "$(dirname "$deb")"/corral-cli_*.deb 2>/dev/null | head -n 1 || true)
[ -f "$deb" ] || { echo "install-test: no .deb at $deb" >&2; exit 1; }

dpkg-query -W -f='${Status}' mmdebstrap 2>/dev/null | grep -q "install ok installed" || {
  step "installing mmdebstrap"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap
}

cache="$target/install-test"
suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
base="$cache/$suite-base.tar"
mkdir -p "$cache/apt-archives/partial"
if [ ! -f "$base" ]; then
  step "making a clean Debian $suite root (mmdebstrap, once)"
  # The apt variant: essential packages and apt, nothing else.
  # (The name's .tar picks the format.)
  mmdebstrap --quiet --variant=apt "$suite" "$cache/$suite-base.part.tar"
  mv "$cache/$suite-base.part.tar" "$base"
fi

root=$(mktemp -d "$cache/root.XXXXXX")
cleanup() {
  # The mounts live in a private mount namespace (unshare below) and end with it.
  rm -rf --one-file-system "$root"
}
trap cleanup EXIT
step "unpacking the clean root"
tar -C "$root" -xf "$base"
cp "$deb" "$root/tmp/corral.deb"
mkdir -p "$root/tmp/project"
echo 'fn main() {}' >"$root/tmp/project/main.rs"

# Inside the root: install with apt (it resolves the .deb's dependencies),
# then start the app under Xvfb and look for its window.
cat >"$root/tmp/inside.sh" <<'INSIDE'
set -eu
export DEBIAN_FRONTEND=noninteractive HOME=/root LANG=C.UTF-8
apt-get update -qq
echo "inside: apt-get install ./corral.deb (and Xvfb to show it on)"
apt-get install -y -qq --no-install-recommends /tmp/corral.deb xvfb xauth x11-utils >/tmp/apt.log 2>&1 ||
  { cat /tmp/apt.log; exit 1; }
dpkg-query -W -f='inside: installed ${Package} ${Version}\n' corral
for file in /usr/bin/corral /usr/bin/corral-cli /usr/share/applications/dev.corral.desktop.desktop \
  /usr/share/metainfo/dev.corral.desktop.metainfo.xml /usr/share/icons/hicolor/128x128/apps/corral.png \
  /usr/share/man/man1/corral.1.gz /usr/share/corral/package-managed; do
  [ -e "$file" ] || { echo "inside: $file is missing"; exit 1; }
done
echo "inside: $(corral-cli --version)"
corral --version | grep -q '^corral ' || { echo "inside: corral --version failed"; exit 1; }

cat >/tmp/window.sh <<'WINDOW'
set -u
CORRAL_NO_KEYCHAIN=1 /usr/bin/corral /tmp/project >/tmp/corral.log 2>&1 &
pid=$!
shown=""
for _ in $(seq 1 120); do
  kill -0 "$pid" 2>/dev/null || break
  shown=$(xwininfo -root -tree 2>/dev/null | grep -E '"project.*Corral"' || true)
  [ -n "$shown" ] && break
  sleep 0.5
done
sleep 2
if ! kill -0 "$pid" 2>/dev/null; then
  echo "inside: corral exited before its window showed:"; cat /tmp/corral.log; exit 1
fi
[ -n "$shown" ] || { echo "inside: no window titled "project — Corral" within 60 s:"; xwininfo -root -tree; cat /tmp/corral.log; kill "$pid"; exit 1; }
echo "inside: the window shows:$shown"
kill -TERM "$pid"; wait "$pid" 2>/dev/null || true
WINDOW
xvfb-run -a -s "-screen 0 1280x900x24" sh /tmp/window.sh
INSIDE

step "installing the .deb in the root and starting Corral there"
# A private mount namespace: /proc, /sys, /dev and the package cache are
# mounted for the root and unmounted with the namespace.
unshare --mount --propagation private sh -eu -c '
  root=$1 archives=$2
  mount -t proc proc "$root/proc"
  mount -t sysfs sys "$root/sys"
  mount --rbind /dev "$root/dev"
  mount --bind "$archives" "$root/var/cache/apt/archives"
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  chroot "$root" /bin/sh /tmp/inside.sh
' sh "$root" "$cache/apt-archives"

if command -v podman >/dev/null && [ -n "$cli_deb" ]; then
  step "the task image from $(basename "$cli_deb")"
  image=$(scripts/image.sh --deb "$cli_deb" --tag corral-task:install-test)
  run=(podman run --rm -i --network none --ulimit=nofile=20000:20000 --ulimit=nproc=4096:4096)
  said=$("${run[@]}" "$image" dpkg-query -W -f='${Package} ${Version}' corral-cli)
  [ "$said" = "corral-cli $(dpkg-deb --field "$cli_deb" Version)" ] ||
    { echo "install-test: the image's corral-cli is not the package's: $said" >&2; exit 1; }
  # A call through the package's binary, in the container, on a folder of its own.
  listed=$("${run[@]}" "$image" sh -c 'mkdir -p /tmp/p && echo hi >/tmp/p/a.txt &&
    corral-cli call --root /tmp/p --no-checkpoint read_file "{\"path\": \"a.txt\"}"')
  case "$listed" in *'"content"'*hi*) ;; *) echo "install-test: the call in the image failed: $listed" >&2; exit 1 ;; esac
  podman rmi --force "$image" >/dev/null
  step "the task image answers: $said"
fi
step "passed"
