#!/usr/bin/env bash
# Install the Debian/Ubuntu libraries Qt needs to run (offscreen or under Xvfb), and the
# sqlite3 command line the benchmarks compare against, and PostgreSQL (the sync tests start a
# throwaway server with its initdb/pg_ctl). Only what is missing is installed.
# Safe to run repeatedly; does nothing on systems without apt-get.
set -euo pipefail

packages=(
  libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0
  libxkbcommon-x11-0 libxkbcommon0 libxcb-xinerama0 libxcb-randr0 libxcb-shape0 libxcb-xfixes0
  libxcb-xkb1 libegl1 libgl1 libfontconfig1 libdbus-1-3 libglib2.0-0 libx11-xcb1 xvfb xauth sqlite3
  fonts-dejavu-core postgresql
)

if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg-query >/dev/null 2>&1; then
  echo "install-system-deps: no apt-get here; make sure Qt's runtime libraries are installed." >&2
  exit 0
fi

missing=()
for pkg in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "install-system-deps: installing ${missing[*]}" >&2
if [[ $(id -u) -eq 0 ]]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  SUDO=(sudo -n)
else
  echo "install-system-deps: missing ${missing[*]}; install them with: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
