"""What the packaging tests share: the built artefacts (reused from ``make dist`` when they are
newer than the sources), a virtual X server, and running a program with a clean environment."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DIST = ROOT / "dist"
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
SHOTS = DIST / "screenshots"


def newest_source() -> float:
    files = [*ROOT.joinpath("ora_desktop").rglob("*"), *ROOT.joinpath("packaging").rglob("*"), ROOT / "pyproject.toml"]
    return max(p.stat().st_mtime for p in files if p.is_file() and "__pycache__" not in p.parts)


def fresh(path: Path) -> bool:
    """Whether ``path`` exists and was built after the last change to the sources."""
    return path.is_file() and path.stat().st_mtime >= newest_source()


def wheel(tmp: Path) -> Path:
    """The wheel ``make dist`` built, or one built now into ``tmp``."""
    built = DIST / f"ora_desktop-{VERSION}-py3-none-any.whl"
    if fresh(built):
        return built
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(ROOT), "-w", str(tmp)], timeout=600)
    return tmp / built.name


def deb() -> Path:
    """The .deb ``make dist`` built (built now, with packaging/build-dist.sh, when missing or stale)."""
    found = sorted(DIST.glob(f"ora-desktop_{VERSION}_*.deb"))
    if not found or not fresh(found[-1]):
        run(["bash", str(ROOT / "packaging" / "build-dist.sh")], timeout=1800, env={**os.environ, "PY": sys.executable})
        found = sorted(DIST.glob(f"ora-desktop_{VERSION}_*.deb"))
    return found[-1]


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """An environment naming only ``home`` for the user's folders (never the checkout on sys.path)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    for var, name in (("XDG_CACHE_HOME", "cache"), ("XDG_DATA_HOME", "data"), ("XDG_CONFIG_HOME", "config"),
                      ("XDG_STATE_HOME", "state")):
        env[var] = str(home / name)
    env.update(HOME=str(home), ORA_HOME=str(home / "ora"), **extra)
    return env


def run(argv: list[str], timeout: float = 300, env: dict[str, str] | None = None, cwd: Path | None = None,
        **kwargs) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` (by default in this environment less PYTHONPATH: the checkout must not stand in
    for what was installed); a failure shows its output."""
    if env is None:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd, **kwargs)
    assert result.returncode == 0, f"{argv} exited {result.returncode}:\n{result.stdout}\n{result.stderr}"
    return result


@contextlib.contextmanager
def x_display() -> Iterator[str | None]:
    """A virtual X screen (Xvfb) for real windows: its DISPLAY, or None when Xvfb is missing (the
    window then runs offscreen)."""
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        yield None
        return
    read, write = os.pipe()
    server = subprocess.Popen([xvfb, "-displayfd", str(write), "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
                              pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write)
    try:
        with os.fdopen(read) as pipe:
            number = pipe.readline().strip()
        assert number, "Xvfb did not report a display"
        yield f":{number}"
    finally:
        server.terminate()
        server.wait(timeout=30)


def window_classes(display: str) -> str:
    """Every window's name and WM_CLASS on ``display`` (xwininfo's tree)."""
    return run(["xwininfo", "-root", "-tree"], env={**os.environ, "DISPLAY": display}).stdout


def grab_screen(display: str, target: Path) -> None:
    """Save the whole X screen as a PNG, through Qt of the test venv (a separate client)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    code = ("import sys\nfrom PySide6.QtGui import QGuiApplication\napp = QGuiApplication(sys.argv[:1])\n"
            "assert app.primaryScreen().grabWindow(0).save(sys.argv[1])\n")
    env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb"}
    run([sys.executable, "-c", code, str(target)], env=env)
