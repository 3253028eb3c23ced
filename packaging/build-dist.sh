#!/usr/bin/env bash
# make dist: the wheel and sdist, the PyInstaller folder as a tarball and a .deb of it, in dist/.
# Prints each artefact's size and how long it took. PY: the Python with the [dist] extra.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
out=dist
mkdir -p "$out"
version=$("$PY" -c 'import importlib.metadata as m; print(m.version("ora-desktop"))')
arch=$(dpkg --print-architecture 2>/dev/null || uname -m)
timings=()

timed() {  # timed LABEL COMMAND...: run it, remember how long it took
  local label=$1 start=$SECONDS
  shift
  "$@"
  timings+=("$label $((SECONDS - start)) s")
}

rm -f "$out"/ora_desktop-*.whl "$out"/ora_desktop-*.tar.gz
timed "wheel+sdist" "$PY" -m build --quiet --outdir "$out" . >/dev/null

# The bundle: one Analysis, one program; ora-desktop-gui is a launcher beside it.
bundle="$out/bundle/ora-desktop"
timed "pyinstaller" "$PY" -m PyInstaller --noconfirm --log-level WARN --distpath "$out/bundle" \
  --workpath build/pyinstaller packaging/ora-desktop.spec
cat > "$bundle/ora-desktop-gui" <<'SH'
#!/bin/sh
# The window: ora-desktop with no command (or only .site.db files) opens it.
exec "$(dirname "$(readlink -f "$0")")/ora-desktop" "$@"
SH
chmod 755 "$bundle/ora-desktop-gui"
tarball="$out/ora-desktop-$version-linux-$arch.tar.gz"
timed "tarball" tar -C "$out/bundle" -czf "$tarball" ora-desktop

deb="$out/ora-desktop_${version}_$arch.deb"
timed "deb" bash packaging/build-deb.sh "$PY" "$bundle" "$version" "$arch" "$deb"

echo "make dist: artefacts in $out/"
for file in "$out"/ora_desktop-"$version"-py3-none-any.whl "$out"/ora_desktop-"$version".tar.gz "$tarball" "$deb"; do
  printf '  %-48s %s\n' "$(basename "$file")" "$(du -h "$file" | cut -f1)"
done
printf '  %-48s %s\n' "bundle folder (unpacked)" "$(du -sh "$bundle" | cut -f1)"
echo "  build times: ${timings[*]}"
