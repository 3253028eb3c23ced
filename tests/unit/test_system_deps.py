"""packaging/install-system-deps.sh by purpose: `make run` asks only for Qt's libraries and,
when it cannot install them (no root, no password-less sudo), says what to install and carries
on; `make test` needs its packages and fails without them. Driven with stand-ins for id, sudo,
dpkg-query and apt-get, so nothing is installed."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "packaging" / "install-system-deps.sh"


@pytest.fixture
def no_root(tmp_path: Path) -> dict[str, str]:
    """PATH with a non-root `id`, a refusing `sudo`, nothing installed, and an apt-get that logs."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stubs = {"id": "echo 1000", "sudo": "exit 1", "dpkg-query": "exit 1",
             "apt-get": f'echo "$@" >> {tmp_path}/apt.log; exit 0'}
    for name, body in stubs.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}


def run(purpose: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(SCRIPT), purpose], capture_output=True, text=True, env=env, timeout=60)


def test_run_warns_and_carries_on_without_root(no_root, tmp_path):
    result = run("run", no_root)
    assert result.returncode == 0
    assert "sudo apt-get install libxcb-cursor0" in result.stderr
    assert "postgresql" not in result.stderr and "xvfb" not in result.stderr
    assert not (tmp_path / "apt.log").exists()


def test_test_needs_its_packages_and_fails_without_root(no_root):
    result = run("test", no_root)
    assert result.returncode == 1
    assert "postgresql" in result.stderr and "xvfb" in result.stderr


def test_an_unknown_purpose_is_named(no_root):
    result = run("deploy", no_root)
    assert result.returncode == 2 and "unknown purpose 'deploy'" in result.stderr
