#!/usr/bin/env bash
# A .deb of the PyInstaller folder: the bundle in /opt/ora-desktop, the programs in /usr/bin, the
# desktop entry, metainfo, icons and MIME type in /usr/share (from the package data).
# Usage: build-deb.sh PYTHON BUNDLE_DIR VERSION ARCH OUT.deb
set -euo pipefail
py=$1 bundle=$2 version=$3 arch=$4 deb=$5
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

mkdir -p "$stage/opt" "$stage/usr/bin" "$stage/DEBIAN"
cp -a "$bundle" "$stage/opt/ora-desktop"
ln -s /opt/ora-desktop/ora-desktop "$stage/usr/bin/ora-desktop"
ln -s /opt/ora-desktop/ora-desktop-gui "$stage/usr/bin/ora-desktop-gui"
"$py" - "$stage/usr/share" <<'PY'
import sys
from pathlib import Path
from ora_desktop.core.desktop_files import install_desktop
install_desktop(Path(sys.argv[1]), exec_path="ora-desktop-gui", refresh=False)
PY
size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
cat > "$stage/DEBIAN/control" <<CONTROL
Package: ora-desktop
Version: $version
Architecture: $arch
Maintainer: The Ora Desktop developers <ora-desktop@users.noreply.github.com>
Installed-Size: $size
Section: utils
Priority: optional
Homepage: https://github.com/ora-ai/ora-desktop
Depends: libc6 (>= 2.36), libxcb-cursor0, libxcb-icccm4, libxcb-keysyms1, libxcb-image0, libxcb-render-util0, libxkbcommon-x11-0, libxcb-xinerama0, libxcb-randr0, libxcb-shape0, libxcb-xfixes0, libxcb-xkb1, libegl1, libgl1, libfontconfig1, libdbus-1-3
Description: See and tend an AI agent's long-term memory
 Ora agents keep their long-term memory in one SQLite file per agent per site.
 Ora Desktop opens those files so a person can browse, search and curate what
 the agents remember, keeps them healthy with a maintenance daemon, and serves
 them to agents over MCP. Self-contained: Python, Qt and the embedding model
 are inside /opt/ora-desktop.
CONTROL
cat > "$stage/DEBIAN/postinst" <<'SH'
#!/bin/sh
set -e
command -v update-desktop-database >/dev/null && update-desktop-database -q /usr/share/applications || true
command -v update-mime-database >/dev/null && update-mime-database /usr/share/mime || true
command -v gtk-update-icon-cache >/dev/null && gtk-update-icon-cache -q -t -f /usr/share/icons/hicolor || true
SH
cp "$stage/DEBIAN/postinst" "$stage/DEBIAN/postrm"
chmod 755 "$stage/DEBIAN/postinst" "$stage/DEBIAN/postrm"
dpkg-deb --root-owner-group -Zzstd --build "$stage" "$deb" >/dev/null
