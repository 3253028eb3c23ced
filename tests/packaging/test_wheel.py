"""The wheel as a user gets it: installed with no extras into a fresh venv it is the library and
the command line, with no Qt anywhere; with ``[gui]`` the window opens on a (virtual) screen with
its icon and its WM_CLASS naming the desktop entry. Needs PyPI (or pip's cache) for the
dependencies; pinned by constraints.txt."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from .support import ROOT, SHOTS, VERSION, clean_env, grab_screen, run, wheel, window_classes, x_display

pytestmark = pytest.mark.slow

LIBRARY = """
import importlib.util, sys
import ora_desktop
assert importlib.util.find_spec("PySide6") is None, "PySide6 is importable"
with ora_desktop.open_store(sys.argv[1]) as store:
    memory = store.add("Deploys go out from the main branch", type="fact", importance=7)
    store.touch(memory.id)
    print(ora_desktop.__version__, [m.content for m in store.recall("fact")])
assert "PySide6" not in sys.modules and "qasync" not in sys.modules
"""

WINDOW = """
import sys
from PySide6.QtCore import QTimer
from ora_desktop.gui import app as gui_app
app = gui_app.make_application()
def check():
    shown = [w for w in app.topLevelWidgets() if w.isVisible() and w.windowTitle().endswith("Ora Desktop")]
    assert shown and not app.windowIcon().isNull() and not shown[0].windowIcon().isNull()
    print("icon sizes", sorted(s.width() for s in app.windowIcon().availableSizes()), flush=True)
    print("shown", shown[0].windowTitle(), flush=True)
QTimer.singleShot(3000, check)
QTimer.singleShot(int(sys.argv[2]) * 1000, app.quit)
raise SystemExit(gui_app.main(["--home", sys.argv[1]]))
"""


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel installed and no extras."""
    root = tmp_path_factory.mktemp("wheel")
    built = wheel(root)
    target = root / "venv"
    run([sys.executable, "-m", "venv", str(target)])
    run([str(target / "bin" / "python"), "-m", "pip", "install", "-q", "-c", str(ROOT / "constraints.txt"),
         str(built)], timeout=900)
    return target


def test_the_wheel_without_extras_is_the_library_and_cli_with_no_qt(venv, tmp_path):
    env = clean_env(tmp_path)
    assert run([str(venv / "bin" / "ora-desktop"), "--version"], env=env).stdout.strip() == f"ora-desktop {VERSION}"
    run([str(venv / "bin" / "ora-desktop"), "demo", "--home", str(tmp_path / "ora"), "--memories", "200"], env=env)
    agent = tmp_path / "ora" / "sites" / "anwe-sh" / "ora.site.db"
    out = run([str(venv / "bin" / "python"), "-c", LIBRARY, str(agent)], env=env, cwd=tmp_path)
    assert out.stdout.startswith(VERSION) and "main branch" in out.stdout
    found = run([str(venv / "bin" / "ora-desktop"), "search", "deploy"], env=env).stdout
    assert "deploy" in found.lower()
    faces = {("ora-desktop",): "gui", ("ora-desktop-gui",): "gui", ("ora-desktop", "mcp", "--db", str(agent)): "mcp",
             ("ora-desktop", "sync", "--db", str(agent), "--url", "postgresql://ora@127.0.0.1:9/ora"): "sync",
             ("ora-desktop", "embed", "--db", str(agent)): "meaning"}
    for (program, *args), extra in faces.items():
        face = subprocess.run([str(venv / "bin" / program), *args], capture_output=True, text=True, env=env,
                              timeout=120)
        assert face.returncode in (1, 2) and f"pip install 'ora-desktop[{extra}]'" in face.stderr, face.stderr
        assert "Traceback" not in face.stderr
    site = next((venv / "lib").glob("python3*/site-packages"))
    assert not list(site.glob("PySide6*")) and not list(site.glob("psycopg*")) and not (site / "mcp").exists()
    assert (site / "ora_desktop" / "resources" / "icons" / "ora-desktop.svg").is_file()
    assert list(site.glob("ora_desktop-*.dist-info/licenses/LICENSE"))


def test_the_wheel_with_the_gui_extra_opens_the_window_with_its_icon(venv, tmp_path):
    built = wheel(tmp_path)
    run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "-c", str(ROOT / "constraints.txt"),
         f"{built}[gui]"], timeout=1800)
    env = clean_env(tmp_path)
    run([str(venv / "bin" / "ora-desktop"), "demo", "--home", str(tmp_path / "ora"), "--memories", "300"], env=env)
    with x_display() as display:
        env.update({"DISPLAY": display, "QT_QPA_PLATFORM": "xcb"} if display else {"QT_QPA_PLATFORM": "offscreen"})
        child = subprocess.Popen([str(venv / "bin" / "python"), "-c", WINDOW, str(tmp_path / "ora"), "8"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
        try:
            if display:
                deadline = time.monotonic() + 60
                while "org.ora.Desktop" not in (tree := window_classes(display)) and time.monotonic() < deadline:
                    time.sleep(0.5)
                assert '("org.ora.Desktop" "Ora Desktop")' in tree  # WM_CLASS = StartupWMClass
                time.sleep(2)
                grab_screen(display, SHOTS / "window-from-wheel.png")
            out, err = child.communicate(timeout=120)
        finally:
            child.kill()
    assert child.returncode == 0, err
    assert "shown" in out and "icon sizes [48, 64, 128, 256]" in out
