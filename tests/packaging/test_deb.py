"""The .deb as a Debian user gets it, unpacked with ``dpkg -x``: the self-contained bundle runs
``--version``, ``demo``, ``search``, answers an MCP ``initialize`` and keeps its window open for
5 s; the launcher, metainfo and icons sit in their system places."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from .support import SHOTS, VERSION, clean_env, deb, grab_screen, run, window_classes, x_display

pytestmark = pytest.mark.slow

APP_ID = "org.ora.Desktop"


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("deb") / "root"
    package = deb()
    run(["dpkg-deb", "-x", str(package), str(root)])
    control = run(["dpkg-deb", "-f", str(package), "Package", "Version", "Depends"]).stdout
    assert f"Version: {VERSION}" in control and "libxcb-cursor0" in control
    return root


def test_the_deb_puts_the_launcher_metainfo_and_icons_in_system_places(unpacked):
    share = unpacked / "usr" / "share"
    desktop = (share / "applications" / f"{APP_ID}.desktop").read_text()
    assert "Exec=ora-desktop-gui %F" in desktop and f"Icon={APP_ID}" in desktop
    assert (share / "metainfo" / f"{APP_ID}.metainfo.xml").is_file()
    assert (share / "mime" / "packages" / f"{APP_ID}.xml").is_file()
    for size in (48, 64, 128, 256):
        assert (share / "icons" / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png").is_file()
    assert (share / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg").is_file()
    for name in ("ora-desktop", "ora-desktop-gui"):
        link = unpacked / "usr" / "bin" / name
        assert link.is_symlink() and str(link.readlink()) == f"/opt/ora-desktop/{name}"
    bundle = unpacked / "opt" / "ora-desktop" / "_internal"
    assert not list(bundle.rglob("*Qml*")) and not list(bundle.rglob("*Quick*")) and not list(bundle.rglob("*gtk*"))
    assert list(bundle.rglob("wordllama/**/*.safetensors")), "the embedding model is missing"


def test_the_bundle_runs_the_cli_search_by_meaning_and_mcp(unpacked, tmp_path):
    program = str(unpacked / "opt" / "ora-desktop" / "ora-desktop")
    env = clean_env(tmp_path)
    assert run([program, "--version"], env=env).stdout.strip() == f"ora-desktop {VERSION}"
    run([program, "demo", "--memories", "300"], env=env)
    assert "deploy" in run([program, "search", "deploy"], env=env).stdout.lower()
    assert "embedded" in run([program, "embed", "--site", "anwe-sh", "--agent", "ora"], env=env).stdout

    agent = tmp_path / "ora" / "sites" / "anwe-sh" / "ora.site.db"
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                          "clientInfo": {"name": "packaging-test", "version": "1"}}}
    server = subprocess.Popen([program, "mcp", "--db", str(agent), "--read-only"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        server.stdin.write(json.dumps(request) + "\n")
        server.stdin.flush()
        answer = json.loads(server.stdout.readline())
    finally:
        server.stdin.close()
        server.wait(timeout=60)
    assert answer["id"] == 1 and answer["result"]["serverInfo"]["name"] == "ora-desktop"
    assert answer["result"]["serverInfo"]["version"] == VERSION


def test_the_bundled_window_stays_open_for_five_seconds(unpacked, tmp_path):
    gui = str(unpacked / "opt" / "ora-desktop" / "ora-desktop-gui")
    env = clean_env(tmp_path)
    run([str(unpacked / "opt" / "ora-desktop" / "ora-desktop"), "demo", "--memories", "300"], env=env)
    with x_display() as display:
        env.update({"DISPLAY": display} if display else {"QT_QPA_PLATFORM": "offscreen"})
        env.pop("QT_QPA_PLATFORM", None) if display else None
        window = subprocess.Popen([gui], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        try:
            time.sleep(5)
            assert window.poll() is None, window.communicate()[1]
            if display:
                deadline = time.monotonic() + 30
                while f'("{APP_ID}" "Ora Desktop")' not in window_classes(display) and time.monotonic() < deadline:
                    time.sleep(0.5)
                assert f'("{APP_ID}" "Ora Desktop")' in window_classes(display)
                grab_screen(display, SHOTS / "window-from-deb.png")
            assert window.poll() is None
        finally:
            window.terminate()
            _, err = window.communicate(timeout=60)
    assert "Traceback" not in err
