"""The Charts panel draws real QtCharts from aggregate queries, for an agent, a site or everything."""

from __future__ import annotations

import asyncio
from datetime import date, timedelta
from pathlib import Path

from PySide6.QtCharts import QAbstractBarSeries, QLineSeries, QPieSeries, QScatterSeries

from ora_desktop.core import AgentFile, open_store
from ora_desktop.core.demo import write_agent
from ora_desktop.core.operations.stats import chart_data, cumulative
from ora_desktop.gui.charts.view import ChartsView

from .panels_support import ctx_fixture, loop_fixture, until  # noqa: F401  (fixtures)


def bar_totals(chart) -> dict[str, float]:
    """Category -> summed bar height over every set of the chart's bar series."""
    (series,) = [s for s in chart.series() if isinstance(s, QAbstractBarSeries)]
    axis = series.attachedAxes()[0]
    labels = axis.categories()
    totals = dict.fromkeys(labels, 0.0)
    for bar_set in series.barSets():
        for i, label in enumerate(labels):
            totals[label] += bar_set.at(i)
    return totals


def make_site(home: Path) -> tuple[Path, Path]:
    ora = home / "sites" / "anwe-sh" / "ora.site.db"
    writer = home / "sites" / "anwe-sh" / "writer.site.db"
    write_agent(ora, 600, seed=1)
    write_agent(writer, 250, seed=2)
    write_agent(home / "sites" / "shop-eu" / "ora.site.db", 100, seed=3)
    return ora, writer


def test_agent_charts_match_the_facets(ctx, loop, ora_home: Path, qtbot) -> None:
    ora, _ = make_site(ora_home)
    with open_store(ora, readonly=True) as store:
        facets = store.facets(superseded="show")
    view = ChartsView(ctx)
    qtbot.addWidget(view)
    view.show()

    async def scenario() -> None:
        ctx.set_current(AgentFile("anwe-sh", "ora", ora))
        await until(lambda: view.data is not None and view.data.total == 600, what="charts for ora")
        await until(lambda: not view._latest.busy)

    loop.run_until_complete(scenario())
    assert view.stack.currentIndex() == 1
    assert "600 memories" in view.summary.text()

    health = bar_totals(view.charts["health"])
    assert [int(v) for v in health.values()] == list(facets.health_buckets.values())
    assert list(health) == [bucket.split("-")[0] for bucket in facets.health_buckets]
    types = bar_totals(view.charts["types"])
    assert {k.split(" (")[0]: int(v) for k, v in types.items()} == facets.types
    assert all(f"({facets.types[k.split(' (')[0]]:,})" in k for k in types), "each type shows its count"

    (pie,) = view.charts["sync"].series()
    assert isinstance(pie, QPieSeries)
    assert {s.label().split(" ")[0]: int(s.value()) for s in pie.slices()} == facets.sync_statuses

    (line,) = view.charts["growth"].series()
    assert isinstance(line, QLineSeries)
    assert line.at(line.count() - 1).y() == 600 - view.data.undated

    scatter = [s for s in view.charts["scatter"].series() if isinstance(s, QScatterSeries)]
    assert sum(s.count() for s in scatter) == len(view.data.scatter)
    assert sum(n for _, _, n in view.data.scatter) == 600  # every memory lands on a point
    for importance, health_value, _ in view.data.scatter:
        assert 1 <= importance <= 10 and 0.0 <= health_value <= 1.0


def test_scope_site_and_everything_add_up_and_name_unreadable_files(ctx, loop, ora_home: Path, qtbot) -> None:
    ora, _ = make_site(ora_home)
    broken = ora_home / "sites" / "anwe-sh" / "broken.site.db"
    broken.write_text("this is not a database")
    view = ChartsView(ctx)
    qtbot.addWidget(view)
    view.show()

    async def scenario() -> None:
        ctx.set_current(AgentFile("anwe-sh", "ora", ora))
        await until(lambda: view.data is not None and view.data.total == 600)
        view.scope.setCurrentIndex(view.scope.findData("site"))
        await until(lambda: view.data.total == 850, what="site scope")
        assert view.data.files == 2
        assert any("broken.site.db" in p for p in view.data.problems)
        assert "could not be read" in view.summary.text()
        view.scope.setCurrentIndex(view.scope.findData("all"))
        await until(lambda: view.data.total == 950, what="everything scope")

    loop.run_until_complete(scenario())
    assert int(sum(bar_totals(view.charts["types"]).values())) == 950


def test_nothing_selected_explains_itself_and_refreshes_after_a_write(ctx, loop, ora_home: Path, qtbot) -> None:
    path = ora_home / "sites" / "anwe-sh" / "ora.site.db"
    write_agent(path, 10, seed=4)
    view = ChartsView(ctx)
    qtbot.addWidget(view)
    view.show()

    async def scenario() -> None:
        await until(lambda: not view._latest.busy)
        assert view.stack.currentIndex() == 0
        assert "Select an agent" in view.message.text()
        ctx.set_current(AgentFile("anwe-sh", "ora", path))
        await until(lambda: view.data is not None and view.data.total == 10)
        store = await ctx.run(ctx.store_for, path)
        await ctx.run(store.add, "a new fact about the checkout", "fact", 9)
        await until(lambda: view.data.total == 11, what="refresh after data_changed")

    loop.run_until_complete(scenario())
    assert view.data.types["fact"] >= 1


def test_chart_data_is_bounded_and_cumulative_thins() -> None:
    days = [(date(2024, 1, 1) + timedelta(days=i), 1) for i in range(1000)]
    points = cumulative(days, max_points=100)
    assert len(points) <= 101 and points[-1][1] == 1000
    assert [b for _, b in points] == sorted(b for _, b in points)
    empty = chart_data("nothing", [], lambda p: open_store(p))
    assert empty.empty and empty.files == 0


def test_a_hidden_charts_panel_waits_until_it_is_shown(ctx, loop, ora_home: Path, qtbot) -> None:
    path = ora_home / "sites" / "anwe-sh" / "ora.site.db"
    write_agent(path, 10, seed=5)
    view = ChartsView(ctx)
    qtbot.addWidget(view)  # not shown: like a tab in the background

    async def scenario() -> None:
        ctx.set_current(AgentFile("anwe-sh", "ora", path))
        store = await ctx.run(ctx.store_for, path)
        await ctx.run(store.add, "written while the charts are hidden", "fact", 5)
        await asyncio.sleep(0.6)
        assert view.data is None, "no counting for a panel nobody sees"
        view.show()
        await until(lambda: view.data is not None and view.data.total == 11, what="counting once shown")

    loop.run_until_complete(scenario())


def test_big_files_scatter_from_a_sample_scaled_to_the_total(ora_home: Path, monkeypatch) -> None:
    from ora_desktop.core.operations import stats as data

    path = ora_home / "sites" / "anwe-sh" / "ora.site.db"
    write_agent(path, 1000, seed=6)
    monkeypatch.setattr(data, "SAMPLE", 100)  # as a 40,000+ row file would be
    with open_store(path, readonly=True) as store:
        result = data.chart_data("one", [path], lambda _p: store)
    assert 90 <= result.scatter_sampled <= 100, "about SAMPLE rows read, not the whole file"
    estimated = sum(n for _, _, n in result.scatter)
    assert abs(estimated - 1000) <= len(result.scatter), "counts scaled to the file's total"
    assert result.total == 1000 and sum(result.types.values()) == 1000, "the other charts stay exact"
