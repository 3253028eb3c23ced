"""The headless maintenance daemon: the scheduler on a plain asyncio loop, in the foreground.

``ora-desktop daemon`` holds a lock in the user data directory (a second daemon refuses to start
and names the first), logs to stderr and to a rotating ``daemon.log`` in the user log directory,
and on SIGTERM/SIGINT lets the running job finish, then exits 0. ``--once`` runs every job that is
due and exits (for cron or a systemd timer).
"""

from __future__ import annotations

import asyncio
import logging
import signal

from .core.config import Config
from .core.daemon_lock import daemon_lock
from .core.home import OraHome
from .core.logs import configure
from .core.maintenance.jobs import JobReport
from .core.scheduler import Scheduler

log = logging.getLogger("ora_desktop.daemon")


def setup_logging(verbose: bool = False) -> logging.Handler | None:
    """Log to stderr and to ``<user log dir>/daemon.log`` (rotated at 5 MB, 5 kept): ``core.logs``."""
    return configure("daemon", verbose)


def run_daemon(home: OraHome | None = None, config: Config | None = None, once: bool = False,
               verbose: bool = False) -> int:
    """Run the daemon until SIGTERM/SIGINT (or, with ``once``, until the due jobs are done)."""
    setup_logging(verbose)
    home = home or OraHome()
    config = config or Config.load()
    if config.exposure_warning:
        log.warning("%s", config.exposure_warning)
    with daemon_lock() as info:
        log.info("daemon started (pid %s) on %s; config %s%s", info.pid, home.root, config.path,
                 "" if config.exists else " (not present: defaults)")
        code = asyncio.run(_main(home, config, once))
        log.info("daemon stopped")
        return code


async def _main(home: OraHome, config: Config, once: bool) -> int:
    loop = asyncio.get_running_loop()
    failures: list[JobReport] = []
    scheduler = Scheduler(loop, home, config, on_report=lambda r: failures.append(r) if r.outcome == "failed" else None)
    if once:
        reports = await scheduler.run_due()
        await scheduler.stop()
        log.info("ran %d due job(s), %d failed", len(reports), len(failures))
        return 1 if failures else 0
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, _on_signal, sig, stop)
    scheduler.start()
    await stop.wait()
    log.info("stopping: letting the running job finish")
    await scheduler.stop()
    return 0


def _on_signal(sig: signal.Signals, stop: asyncio.Event) -> None:
    log.info("received %s", signal.Signals(sig).name)
    stop.set()
