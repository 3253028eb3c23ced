"""The install layers and recipes a packager relies on: `pip install ora-desktop` pulls no Qt,
PostgreSQL driver, MCP SDK or model; PySide6 is capped; the Qt-free venv installs extras from
pyproject (not a hand list); the Flatpak manifest names our id, runtime and files."""

from __future__ import annotations

import importlib.metadata
import json
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

import ora_desktop
from ora_desktop.cli import main

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def names(requirements: list[str]) -> set[str]:
    return {re.split(r"[\[<>=!; ]", r, maxsplit=1)[0].lower() for r in requirements}


def test_the_base_install_is_the_library_and_cli_only():
    base = names(PROJECT["dependencies"])
    assert not base & {"pyside6-essentials", "pyside6-addons", "pyside6", "qasync", "mcp", "psycopg",
                       "wordllama", "numkong"}
    extras = PROJECT["optional-dependencies"]
    assert names(extras["gui"]) == {"pyside6-essentials", "pyside6-addons", "qasync"}
    assert names(extras["mcp"]) == {"mcp"} and names(extras["sync"]) == {"psycopg"}
    assert names(extras["meaning"]) == {"wordllama", "numkong"}
    assert extras["all"] == ["ora-desktop[gui,mcp,sync,meaning]"]


def test_pyside6_is_capped_to_the_tested_minor_and_pinned_by_the_constraints():
    gui = PROJECT["optional-dependencies"]["gui"]
    assert all("<6.13" in r for r in gui if r.lower().startswith("pyside6"))
    pins = dict(line.split("==") for line in (ROOT / "constraints.txt").read_text().splitlines()
                if "==" in line and not line.startswith("#"))
    assert pins["PySide6_Essentials"].startswith("6.12.")


def test_make_installs_from_pyproject_with_the_constraints():
    makefile = (ROOT / "Makefile").read_text()
    assert "-e '.[mcp,sync,meaning,test-core]'" in makefile  # the Qt-free venv: extras, not a hand list
    assert "PIP := -m pip install -q -c constraints.txt" in makefile
    assert "install-system-deps.sh $*" in makefile and "run: $(RSTAMP) $(SYS)-run" in makefile


def test_the_flatpak_manifest_names_our_id_runtime_and_files():
    path = ROOT / "packaging" / "flatpak" / "org.ora.Desktop.json"
    manifest = json.loads(path.read_text())
    assert manifest["id"] == "org.ora.Desktop"
    assert (manifest["runtime"], manifest["sdk"]) == ("org.kde.Platform", "org.kde.Sdk")
    assert manifest["command"] in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["gui-scripts"]
    assert {"--socket=wayland", "--socket=fallback-x11"} <= set(manifest["finish-args"])
    for module in manifest["modules"]:
        for source in module["sources"]:
            assert (path.parent / source["path"]).exists(), source


def test_flatpak_builder_reads_the_manifest_without_a_warning():
    """flatpak-builder's own parser (its runtimes cannot be downloaded here): an unknown key or a
    value of the wrong type is a warning on stderr."""
    builder = shutil.which("flatpak-builder")
    if builder is None:
        pytest.skip("flatpak-builder is not installed (make test installs it: packaging/install-system-deps.sh test)")
    path = ROOT / "packaging" / "flatpak" / "org.ora.Desktop.json"
    result = subprocess.run([builder, "--show-manifest", str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and not result.stderr.strip(), result.stderr
    assert json.loads(result.stdout) == json.loads(path.read_text())


def test_the_version_has_one_source(capsys):
    assert ora_desktop.__version__ == importlib.metadata.version("ora-desktop") == PROJECT["version"]
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.strip() == f"ora-desktop {PROJECT['version']}"
    init = (ROOT / "ora_desktop" / "__init__.py").read_text()
    assert PROJECT["version"] not in init


def test_the_metainfo_names_the_current_release():
    """Software centres show the newest <release>: it is the version in pyproject.toml."""
    import xml.etree.ElementTree as ET

    root = ET.parse(ROOT / "ora_desktop" / "resources" / "org.ora.Desktop.metainfo.xml").getroot()
    assert root.find("releases/release").get("version") == PROJECT["version"]
