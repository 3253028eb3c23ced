"""The scheduler: what it plans, missed runs, coalescing after a stall, new agents without restart."""

from __future__ import annotations

import asyncio
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ora_desktop.core import OraHome
from ora_desktop.core.config import Config
from ora_desktop.core.history import history, record
from ora_desktop.core.maintenance import JobReport
from ora_desktop.core.scheduler import MISFIRE_GRACE, Scheduler, next_runs, planned_jobs
from tests.unit.maintenance_support import make_db


def config(schedule: dict, **tables) -> Config:
    return Config(Path("test.toml"), {"schedule": schedule, **tables}, True)


ONLY_CHECK = {"decay": "off", "cleanup": "off", "retention": "off", "promote": "off", "backup": "off", "check": "1s",
              "purge-trash": "off"}


def home_with(ora_home: Path, *agents: str) -> OraHome:
    for name in agents:
        site, agent = name.split("/")
        make_db(ora_home / "sites" / site / f"{agent}.site.db", [{"id": "a"}])
    return OraHome(ora_home)


def test_planned_jobs_follow_the_config(ora_home: Path) -> None:
    home = home_with(ora_home, "shop/ora", "shop/task-7", "blog/ora")
    cfg = config({"backup": "off"}, sites={"shop": {"retention": {"max_age_days": 30}}})
    plan = {(p.job, f"{p.site}/{p.agent}") for p in planned_jobs(cfg, home)}
    assert ("decay", "blog/ora") in plan and ("check", "shop/task-7") in plan
    assert not any(job == "backup" for job, _ in plan)  # off
    assert {a for job, a in plan if job == "retention"} == {"shop/ora", "shop/task-7"}  # only where a policy is
    assert {a for job, a in plan if job == "promote"} == {"shop/task-7"}  # only task agents


def test_next_runs_come_from_the_history(ora_home: Path) -> None:
    home = home_with(ora_home, "shop/ora")
    path = (ora_home / "sites" / "shop" / "ora.site.db").resolve()
    now = datetime.now(UTC)
    record(JobReport("decay", path, now - timedelta(hours=1), now - timedelta(hours=1), "ok"))
    record(JobReport("backup", path, now - timedelta(days=3), now - timedelta(days=3), "ok"))
    runs = {job: when for job, _, when in next_runs(Config.defaults(), home, now)}
    assert abs(runs["decay"] - (now + timedelta(hours=23))) < timedelta(seconds=1)
    assert runs["backup"] < now  # overdue: runs at once on the next start
    assert runs["check"] == now  # never ran


def run_loop(ora_home: Path, cfg: Config, seconds: float, during=None) -> Scheduler:
    async def main() -> Scheduler:
        scheduler = Scheduler(asyncio.get_running_loop(), OraHome(ora_home), cfg)
        scheduler.start()
        if during is not None:
            await during(scheduler)
        await asyncio.sleep(seconds)
        await scheduler.stop()
        return scheduler

    return asyncio.run(main())


def test_jobs_run_on_their_schedule_and_new_agents_are_picked_up(ora_home: Path) -> None:
    home_with(ora_home, "shop/ora")
    cfg = config(ONLY_CHECK, daemon={"rescan": "1s"})

    async def add_agent(scheduler: Scheduler) -> None:
        await asyncio.sleep(0.5)
        assert [j for j, _, _ in scheduler.jobs_due()] == ["check"]
        make_db(ora_home / "sites" / "newsite" / "bot.site.db", [{"id": "x"}])

    run_loop(ora_home, cfg, 3.0, add_agent)
    runs = history(job="check")
    by_file = {Path(r.path).parent.name: 0 for r in runs}
    for r in runs:
        by_file[Path(r.path).parent.name] += 1
    assert by_file["shop"] >= 2  # at start, then every second
    assert by_file.get("newsite", 0) >= 1  # appeared under ORA_HOME while running
    assert all(r.outcome == "ok" for r in runs)


def test_a_run_missed_while_off_happens_once_at_start(ora_home: Path) -> None:
    home_with(ora_home, "shop/ora")
    path = (ora_home / "sites" / "shop" / "ora.site.db").resolve()
    long_ago = datetime.now(UTC) - timedelta(days=5)
    record(JobReport("check", path, long_ago, long_ago, "ok"))
    cfg = config({**ONLY_CHECK, "check": "daily"})
    run_loop(ora_home, cfg, 1.5)
    fresh = [r for r in history(job="check") if r.started > long_ago + timedelta(days=1)]
    assert len(fresh) == 1  # five missed days: one run, not five


def test_a_stalled_loop_runs_a_late_job_once_instead_of_dropping_it(ora_home: Path) -> None:
    home_with(ora_home, "shop/ora")
    cfg = config({**ONLY_CHECK, "check": "2s"})
    counts = {}

    async def stall(scheduler: Scheduler) -> None:
        aps_job = next(j for j in scheduler._aps.get_jobs() if j.id.startswith("check:"))
        assert aps_job.coalesce and aps_job.misfire_grace_time == MISFIRE_GRACE
        await asyncio.sleep(2.5)
        counts["before"] = len(history(job="check"))
        time.sleep(5.0)  # the loop is blocked: two 2-second slots pass unseen
        await asyncio.sleep(0.8)  # a regular slot this soon after the late run is skipped as "just ran"
        counts["after"] = len(history(job="check"))

    run_loop(ora_home, cfg, 0.0, stall)
    assert counts["after"] - counts["before"] == 1


def test_stop_lets_the_running_job_finish(ora_home: Path) -> None:
    home_with(ora_home, "shop/ora")

    async def main() -> list:
        scheduler = Scheduler(asyncio.get_running_loop(), OraHome(ora_home), config(ONLY_CHECK))
        task = asyncio.ensure_future(scheduler.run("check", ora_home / "sites" / "shop" / "ora.site.db"))
        await asyncio.sleep(0)
        await scheduler.stop()
        return [await task]

    (report,) = asyncio.run(main())
    assert report.outcome == "ok"
    assert len(history(job="check")) == 1


def test_synchronous_shutdown_stops_the_timer_and_joins_the_worker(ora_home: Path) -> None:
    home_with(ora_home, "shop/ora")

    async def main() -> tuple[bool, int]:
        scheduler = Scheduler(asyncio.get_running_loop(), OraHome(ora_home), config(ONLY_CHECK))
        scheduler.start()
        await asyncio.sleep(1.2)
        running_job = asyncio.ensure_future(scheduler.run("check", ora_home / "sites" / "shop" / "ora.site.db"))
        await asyncio.sleep(0)
        scheduler.shutdown()  # what the window calls as it closes: no coroutine, no private parts
        workers = [t for t in threading.enumerate() if t.name.startswith("ora-maintenance")]
        runs = len(history(job="check"))
        await asyncio.sleep(1.5)  # nothing more runs once shut down
        await asyncio.gather(running_job, return_exceptions=True)
        return scheduler.running, len(history(job="check")) - runs, workers

    running, more, workers = asyncio.run(main())
    assert not running and more == 0
    assert workers == [], "the worker thread has ended when shutdown returns"


def test_a_slot_right_after_a_manual_run_is_shown_as_the_next_one(ora_home: Path) -> None:
    home_with(ora_home, "shop/ora")
    path = (ora_home / "sites" / "shop" / "ora.site.db").resolve()
    cfg = config({**ONLY_CHECK, "check": "daily"})
    seen = {}

    async def manual_run(scheduler: Scheduler) -> None:
        before = {job: when for job, _p, when in scheduler.jobs_due()}
        report = await scheduler.run("check", path)  # "Run now" in the window
        assert report.outcome == "ok"
        after = {job: when for job, _p, when in scheduler.jobs_due()}
        seen.update(before=before["check"], after=after["check"])

    loop = asyncio.new_event_loop()
    try:
        scheduler = Scheduler(loop, OraHome(ora_home), cfg, first_run_delay=600)
        scheduler.start()
        loop.run_until_complete(manual_run(scheduler))
        loop.run_until_complete(scheduler.stop())
    finally:
        loop.close()
    # The slot 10 minutes away would be skipped (the job just ran), so the next real run is a day later.
    assert seen["before"] - datetime.now(UTC) < timedelta(minutes=11)
    assert seen["after"] - seen["before"] == timedelta(days=1)


def test_a_file_that_cannot_be_opened_fails_once_until_it_changes(ora_home: Path) -> None:
    home_with(ora_home, "shop/ora")
    broken = ora_home / "sites" / "shop" / "other.site.db"
    broken.write_bytes(b"not a database, just text " * 40)
    cfg = config({**ONLY_CHECK, "decay": "1s"}, daemon={"rescan": "1s"})

    async def mend(scheduler: Scheduler) -> None:
        await asyncio.sleep(3.5)
        key = str(broken.resolve())
        assert key in scheduler.unopenable and "not an SQLite database" in scheduler.unopenable[key][1]
        counts["before"] = len(history(path=broken))
        broken.unlink()
        make_db(broken, [{"id": "mended"}])  # the file changes: its jobs run again
        await asyncio.sleep(2.5)

    counts: dict[str, int] = {}
    run_loop(ora_home, cfg, 0.0, mend)
    assert counts["before"] == 2  # one failed run per job, not one per one-second slot
    assert {r.job for r in history(path=broken) if r.outcome != "ok"} == {"check", "decay"}
    assert any(r.outcome == "ok" for r in history(path=broken))  # ran again once mended
    good = ora_home / "sites" / "shop" / "ora.site.db"
    assert len(history(path=good, job="check")) >= 4
