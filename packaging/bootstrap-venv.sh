#!/usr/bin/env bash
# Create a virtual environment at $1 with $PYTHON (default python3), installing Debian's
# python3-venv first when the interpreter lacks ensurepip (plain Debian python3 does).
set -euo pipefail
target=${1:?usage: bootstrap-venv.sh DIR}
python=${PYTHON:-python3}

if [[ -x "$target/bin/python" ]]; then
  exit 0
fi
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "bootstrap-venv: $python is $("$python" --version 2>&1); Ora Desktop needs Python 3.11 or newer" >&2
  exit 1
fi
if ! "$python" -m venv "$target" 2>/dev/null; then
  rm -rf "$target"
  if command -v apt-get >/dev/null 2>&1; then
    ver=$("$python" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
    SUDO=()
    [[ $(id -u) -eq 0 ]] || SUDO=(sudo -n)
    echo "bootstrap-venv: installing python${ver}-venv (the interpreter has no ensurepip)" >&2
    export DEBIAN_FRONTEND=noninteractive
    "${SUDO[@]}" apt-get update -qq
    "${SUDO[@]}" apt-get install -y -qq "python${ver}-venv" >/dev/null \
      || "${SUDO[@]}" apt-get install -y -qq python3-venv >/dev/null
    "$python" -m venv "$target"
  else
    echo "bootstrap-venv: '$python -m venv' failed; install your distribution's venv package" >&2
    exit 1
  fi
fi
