#!/usr/bin/env bash
# The fresh-machine check (docs/building.md): the README's two commands,
#   bash scripts/setup.sh && bash scripts/test.sh
# in a Debian 12 (bookworm) chroot made with debootstrap that holds only what a new
# machine of the development kind has before setup (.library's machine notes: gcc, g++,
# make, git, OpenJDK 17, the pyenv CPython 3.11.7 with only pip and setuptools, Swift
# in /opt/swift) and none of the build's Debian packages. Not run by CI: it needs root,
# the Debian mirror and PyPI, a few GB of disk and about an hour on 2 cores.
#
#   sudo bash scripts/check_fresh_machine.sh [--root DIR] [--ref REF] [--new] [--ccache-from DIR]
#     --root DIR  the chroot (default /work/chroot-fresh/root); made when absent
#     --ref REF   the commit or branch to clone (default: HEAD of this checkout)
#     --new       delete DIR first (a new machine; otherwise the chroot is reused and
#                 only the clone is new, so apt and pip find what a first run installed)
#     --ccache-from DIR  copy this ccache directory (e.g. ~/.cache/ccache) into the
#                 chroot's first: a shorter build on 2 shared cores, the same outcome
#                 (ccache hits only where every header it read is there, unchanged)
# Writes DIR/../report/: packages-before.txt (the new machine's, recorded when the
# chroot was made), packages-after.txt, apt-installed.txt (the difference: what setup.sh
# had apt install, with a reused chroot also in earlier runs), setup.log, test.log. Exit status: that of the two
# commands.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
ROOT=/work/chroot-fresh/root
REF=HEAD
NEW=0
CCACHE_FROM=
while [ $# -gt 0 ]; do
  case "$1" in
    --root) ROOT=$2; shift 2 ;;
    --ref) REF=$2; shift 2 ;;
    --new) NEW=1; shift ;;
    --ccache-from) CCACHE_FROM=$2; shift 2 ;;
    *) echo "usage: scripts/check_fresh_machine.sh [--root DIR] [--ref REF] [--new] [--ccache-from DIR]" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "check_fresh_machine: needs root (debootstrap, chroot, mounts)" >&2; exit 2; }
MIRROR=${UAII_DEBIAN_MIRROR:-http://deb.debian.org/debian}
PYENV_SRC=${UAII_PYENV:-/root/.pyenv}
PY_VERSION=3.11.7
REPORT=$(dirname "$ROOT")/report
mkdir -p "$REPORT"

# What a new machine of this kind has besides Debian's base system: the compilers, git
# and a JDK, and the run-time libraries that its pyenv CPython and its Swift toolchain
# load (none of them a -dev package the build needs).
FRESH_PACKAGES=(
  ca-certificates git gcc g++ make openjdk-17-jdk-headless
  libssl3 libffi8 libsqlite3-0 libbz2-1.0 liblzma5 libreadline8 libncursesw6 zlib1g libuuid1
  libcurl4 libedit2 libicu72 libxml2 libncurses6
)

mounted=()
cleanup() {
  local i
  for ((i=${#mounted[@]}-1; i>=0; i--)); do umount -l "${mounted[$i]}" 2>/dev/null || true; done
}
trap cleanup EXIT
bind() {  # bind SRC DST [ro]
  mkdir -p "$2"
  mount --bind "$1" "$2"
  mounted+=("$2")
  if [ "${3:-}" = ro ]; then mount -o remount,bind,ro "$2"; fi
}
in_root() { chroot "$ROOT" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
  PATH=/root/.pyenv/shims:/root/.pyenv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/opt/swift/usr/bin \
  PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_DEFAULT_TIMEOUT=180 PIP_CERT=/etc/ssl/certs/ca-certificates.crt \
  PIP_FIND_LINKS=/opt/wheels PYENV_ROOT=/root/.pyenv "$@"; }

if [ "$NEW" = 1 ] && [ -d "$ROOT" ]; then
  echo "check_fresh_machine: removing $ROOT"
  rm -rf --one-file-system "$ROOT"
fi

# 1. Debian's base system.
if [ ! -x "$ROOT/usr/bin/apt-get" ]; then
  command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap
  debootstrap --variant=minbase bookworm "$ROOT" "$MIRROR"
fi
cat > "$ROOT/etc/apt/sources.list" <<EOF
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
# Every installed machine names itself localhost; debootstrap writes no /etc/hosts (without
# it "localhost" does not resolve, and Selenium cannot reach chromedriver).
[ -f "$ROOT/etc/hosts" ] || cp /etc/hosts "$ROOT/etc/hosts"
printf '#!/bin/sh\nexit 101\n' > "$ROOT/usr/sbin/policy-rc.d"  # no services start in the chroot
chmod +x "$ROOT/usr/sbin/policy-rc.d"

bind /proc "$ROOT/proc"
bind /sys "$ROOT/sys" ro
bind /dev "$ROOT/dev"
bind /dev/pts "$ROOT/dev/pts"
# The machine's read-only extras: Swift, the local wheels pip is pointed at, and the
# project's shared data (../shared beside the checkout).
[ -d /opt/swift ] && bind /opt/swift "$ROOT/opt/swift" ro
[ -d /opt/wheels ] && bind /opt/wheels "$ROOT/opt/wheels" ro
[ -d "$REPO/../shared" ] && bind "$(cd "$REPO/../shared" && pwd)" "$ROOT/work/shared" ro

# 2. The new machine's own state.
if [ ! -f "$ROOT/var/lib/uaii-fresh-machine" ]; then
  in_root apt-get update -qq
  in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${FRESH_PACKAGES[@]}"
  # pyenv with CPython $PY_VERSION as pyenv installed it: site-packages holds pip and
  # setuptools only (this machine's copy has had more installed since).
  sp=lib/python3.11/site-packages
  mkdir -p "$ROOT/root/.pyenv/versions/$PY_VERSION/bin"
  tar -C "$PYENV_SRC" --exclude=./versions --exclude=./shims -cf - . | tar -C "$ROOT/root/.pyenv" -xf -
  tar -C "$PYENV_SRC/versions/$PY_VERSION" --exclude="./$sp/*" --exclude='./bin/*' -cf - . \
    | tar -C "$ROOT/root/.pyenv/versions/$PY_VERSION" -xf -
  for f in pip pip-23.2.1.dist-info setuptools setuptools-65.5.0.dist-info pkg_resources _distutils_hack \
           distutils-precedence.pth; do
    cp -a "$PYENV_SRC/versions/$PY_VERSION/$sp/$f" "$ROOT/root/.pyenv/versions/$PY_VERSION/$sp/"
  done
  for f in "$PYENV_SRC/versions/$PY_VERSION/bin/"{python,python3,python3.11,python3-config,python3.11-config,pip,pip3,pip3.11,pydoc3,pydoc3.11,2to3,2to3-3.11,idle3,idle3.11}; do
    [ -e "$f" ] && cp -a "$f" "$ROOT/root/.pyenv/versions/$PY_VERSION/bin/"
  done
  echo "$PY_VERSION" > "$ROOT/root/.pyenv/version"
  in_root pyenv rehash
  # The new machine's packages, for the report of what setup.sh installs.
  in_root dpkg-query -W -f='${Package}\n' | sort > "$ROOT/var/lib/uaii-fresh-machine.tmp"
  mv "$ROOT/var/lib/uaii-fresh-machine.tmp" "$ROOT/var/lib/uaii-fresh-machine"
fi
# The machine's own certificate authorities (its HTTPS egress to PyPI goes through them).
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  cp /usr/local/share/ca-certificates/*.crt "$ROOT/usr/local/share/ca-certificates/"
  in_root update-ca-certificates >/dev/null
fi
in_root python3 --version
cp "$ROOT/var/lib/uaii-fresh-machine" "$REPORT/packages-before.txt"
if [ -n "$CCACHE_FROM" ]; then
  mkdir -p "$ROOT/root/.cache/ccache"
  cp -an "$CCACHE_FROM/." "$ROOT/root/.cache/ccache/"
fi

# 3. A new clone, and the README's two commands (setup.sh with its final generate run).
in_root rm -rf /work/uaii
git -C "$REPO" rev-parse --verify "$REF^{commit}" >/dev/null
commit=$(git -C "$REPO" rev-parse "$REF^{commit}")
in_root mkdir -p /work
git clone -q --no-local "$REPO" "$ROOT/work/uaii"
git -C "$ROOT/work/uaii" checkout -q "$commit"
echo "check_fresh_machine: $commit in $ROOT/work/uaii"
set +e
in_root bash -c 'cd /work/uaii && nice bash scripts/setup.sh' 2>&1 | tee "$REPORT/setup.log"
rc=${PIPESTATUS[0]}
if [ "$rc" = 0 ]; then
  in_root bash -c 'cd /work/uaii && nice bash scripts/test.sh' 2>&1 | tee "$REPORT/test.log"
  rc=${PIPESTATUS[0]}
fi
set -e
in_root dpkg-query -W -f='${Package}\n' | sort > "$REPORT/packages-after.txt"
comm -13 "$REPORT/packages-before.txt" "$REPORT/packages-after.txt" > "$REPORT/apt-installed.txt"
echo "check_fresh_machine: setup.sh + test.sh exit $rc; apt installed $(wc -l < "$REPORT/apt-installed.txt") packages ($REPORT)"
exit $rc
