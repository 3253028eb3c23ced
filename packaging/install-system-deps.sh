#!/usr/bin/env bash
# Install the Debian/Ubuntu packages one purpose needs; only what is missing is installed.
#   run    Qt's runtime libraries (the window). Never fails: without root or password-less sudo,
#          or without apt-get, it says what to install and carries on.
#   test   run's, plus Xvfb (a real window on a virtual screen), the sqlite3 command line the
#          benchmarks compare against, PostgreSQL (the sync tests start a throwaway server),
#          fonts, and appstream, desktop-file-utils, systemd and flatpak-builder for checking the
#          desktop entry, metainfo, service unit and Flatpak manifest.
#   dist   run's, plus binutils (PyInstaller reads shared libraries with objdump).
# Safe to run repeatedly.
set -euo pipefail
purpose=${1:-run}

run=(
  libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0
  libxkbcommon-x11-0 libxkbcommon0 libxcb-xinerama0 libxcb-randr0 libxcb-shape0 libxcb-xfixes0
  libxcb-xkb1 libegl1 libgl1 libfontconfig1 libdbus-1-3 libglib2.0-0 libx11-xcb1
)
case "$purpose" in
  run) packages=("${run[@]}") ;;
  test) packages=("${run[@]}" xvfb xauth x11-utils sqlite3 fonts-dejavu-core postgresql appstream systemd desktop-file-utils flatpak-builder) ;;
  dist) packages=("${run[@]}" binutils) ;;
  *) echo "install-system-deps: unknown purpose '$purpose' (run, test or dist)" >&2; exit 2 ;;
esac

# For `run`, a missing package is a warning: the window may still start (another distribution,
# libraries installed by other means). For test and dist it is an error.
give_up() {
  echo "install-system-deps ($purpose): $1" >&2
  [[ "$purpose" == run ]] && exit 0
  exit 1
}

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

if [[ $(id -u) -eq 0 ]]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  SUDO=(sudo -n)
else
  give_up "missing ${missing[*]}; install them with: sudo apt-get install ${missing[*]}"
fi
echo "install-system-deps ($purpose): installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq || give_up "apt-get update failed"
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
  || give_up "could not install ${missing[*]}"
