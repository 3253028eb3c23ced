"""Ora Desktop: see and tend an AI agent's long-term memory.

``import ora_desktop`` gives the headless engine (no Qt is loaded)::

    import ora_desktop
    with ora_desktop.open_store("~/.ora/sites/anwe-sh/ora.site.db") as store:
        store.add("The site deploys from main", type="fact", importance=7)
        for memory in store.recall("fact"):
            print(memory.importance, memory.title)
"""

from .core import *  # noqa: F403
from .core import __all__ as _core_all

__version__ = "0.1.0"
__all__ = [*_core_all, "__version__", "sync"]


def sync(*args, **kwargs):  # type: ignore[no-untyped-def]
    """Sync memory files with the shared PostgreSQL server; see
    :func:`ora_desktop.core.operations.sync.sync` (imported on first use: psycopg and the job
    runner are not loaded by ``import ora_desktop``)::

        report = ora_desktop.sync(site="anwe-sh", agent="ora", url="postgresql://ora@db/ora")
        for result in report.results:
            print(result.summary)
    """
    from .core.operations.sync import sync as run_sync

    return run_sync(*args, **kwargs)
