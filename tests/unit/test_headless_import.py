"""``import ora_desktop`` (the library agents use) loads no Qt and no qasync."""

from __future__ import annotations

import json
import subprocess
import sys

QT_PREFIXES = ("PySide6", "shiboken6", "qasync", "PyQt5", "PyQt6", "ora_desktop.gui")


def loaded_modules(code: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"],
        capture_output=True, text=True, check=True, timeout=60,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_ora_desktop_loads_no_qt():
    modules = loaded_modules("import ora_desktop")
    assert "ora_desktop.core" in modules  # its names import on first use (test_lazy_imports)
    assert [m for m in modules if m.startswith(QT_PREFIXES)] == []


def test_using_the_engine_loads_no_qt(tmp_path):
    path = tmp_path / "agent.site.db"
    code = (
        "import ora_desktop\n"
        f"home = ora_desktop.OraHome({str(tmp_path)!r})\n"
        "path = home.create_agent('site', 'ora')\n"
        "with ora_desktop.open_store(path) as store:\n"
        "    store.add('hello', type='fact', importance=7)\n"
        "    store.recall('fact'); store.facets(); store.list()\n"
    )
    modules = loaded_modules(code)
    assert [m for m in modules if m.startswith(QT_PREFIXES)] == []
    assert not path.exists()  # the code above wrote under sites/, not here
