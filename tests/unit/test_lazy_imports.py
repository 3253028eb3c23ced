"""``import ora_desktop`` is light (the engine's public names are imported on first use), and
every name and module still imports: a broken import fails here, loudly, not at a user's call."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import pytest

import ora_desktop
import ora_desktop.core
import ora_desktop.core.search


@pytest.mark.parametrize("package", [ora_desktop, ora_desktop.core, ora_desktop.core.search],
                         ids=lambda p: p.__name__)
def test_every_public_name_imports(package) -> None:
    for name in package.__all__:
        assert getattr(package, name) is not None, name
    assert set(package.__all__) <= set(dir(package))


def test_star_import_gives_the_whole_api() -> None:
    names: dict = {}
    exec("from ora_desktop import *", names)
    assert {"open_store", "Store", "Memory", "OraError", "search_many", "build_context", "sync"} <= set(names)
    assert names["open_store"] is ora_desktop.open_store  # the library's: journals as "library"


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        ora_desktop.no_such_name  # noqa: B018
    with pytest.raises(ImportError):
        exec("from ora_desktop.core import no_such_name", {})


def test_every_module_of_the_engine_imports() -> None:
    for module in pkgutil.walk_packages(ora_desktop.core.__path__, "ora_desktop.core."):
        importlib.import_module(module.name)


def test_the_library_import_loads_no_engine_it_does_not_use() -> None:
    """An agent's ``import ora_desktop`` (and every CLI command) starts without the search engine,
    the context builder, PostgreSQL's driver, the scheduler or Qt; a store still works at once."""
    code = ("import sys, ora_desktop; "
            "print(sorted(m for m in ('ora_desktop.core.search.engine', 'ora_desktop.core.context', "
            "'ora_desktop.core.conversation', 'psycopg', 'apscheduler', 'numpy', 'PySide6') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_mcp_server_answers_initialize_before_loading_what_only_tools_need() -> None:
    """``ora-desktop mcp`` parses its command with its own module only, and its server is built
    without the search engine, the context builder or the scheduler: a client waits for
    ``initialize`` (they load with the first search or context, or the index warm-up)."""
    code = ("import sys; from ora_desktop.cli import ALONE, build_parser; build_parser((ALONE['mcp'],)); "
            "import ora_desktop.mcp.server; "
            "print(sorted(m for m in ('ora_desktop.core.operations.searching', 'ora_desktop.core.search.engine', "
            "'ora_desktop.core.context', 'ora_desktop.cli.maintenance', 'ora_desktop.core.scheduler', "
            "'apscheduler') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
