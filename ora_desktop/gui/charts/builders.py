"""Turn :class:`~ora_desktop.core.operations.stats.ChartData` into QtCharts charts (GUI thread only)."""

from __future__ import annotations

import random
from datetime import date, datetime, time

from PySide6.QtCharts import (
    QAbstractBarSeries,
    QBarCategoryAxis,
    QBarSet,
    QChart,
    QDateTimeAxis,
    QHorizontalBarSeries,
    QLineSeries,
    QPieSeries,
    QScatterSeries,
    QStackedBarSeries,
    QValueAxis,
)
from PySide6.QtCore import QDateTime, QMargins, Qt
from PySide6.QtGui import QColor

from ora_desktop.core.operations.stats import ChartData, cumulative

#: Colours by meaning, so "pending" is the same colour in every chart.
SYNC_COLOURS = {"synced": "#2e9d5b", "pending": "#d99a1e", "conflict": "#d0443e", "local_only": "#6b7fb3"}
HEALTH_LOW = QColor("#d0443e")
HEALTH_OK = QColor("#2e9d5b")
#: Scatter density bands: (upper bound of memories per point, label, marker size).
DENSITY = ((1, "1 memory", 7.0), (10, "2–10", 10.0), (100, "11–100", 13.0), (None, "more than 100", 17.0))


def reset(chart: QChart, title: str, dark: bool) -> QChart:
    """Empty ``chart`` (series deleted, axes removed and deleted) and set its title and theme.

    Charts are reused rather than replaced: swapping a QChartView's chart and deleting the old
    one while it still has pending paint events can crash Qt.
    """
    chart.removeAllSeries()
    for axis in chart.axes():
        chart.removeAxis(axis)
        axis.deleteLater()
    chart.setTheme(QChart.ChartTheme.ChartThemeDark if dark else QChart.ChartTheme.ChartThemeLight)
    chart.setTitle(title)
    chart.setAnimationOptions(QChart.AnimationOption.NoAnimation)
    chart.setMargins(QMargins(4, 4, 4, 4))
    chart.legend().setAlignment(Qt.AlignmentFlag.AlignBottom)
    if dark:
        chart.setBackgroundBrush(QColor("#262a30"))
    return chart


def health_chart(chart: QChart, data: ChartData, dark: bool) -> QChart:
    """Bars per health bucket, red below the recall threshold (0.3)."""
    reset(chart, "Health distribution", dark)
    labels = list(data.health_buckets)
    series = QStackedBarSeries()
    for colour, wanted in ((HEALTH_LOW, "below recall (≤ 0.3)"), (HEALTH_OK, "recallable")):
        bar = QBarSet(wanted)
        bar.setColor(colour)
        for label in labels:
            low = _bucket_low(label)
            below = low is not None and low < 0.3
            bar.append(data.health_buckets[label] if below == (colour is HEALTH_LOW) else 0)
        series.append(bar)
    series.setBarWidth(0.9)
    chart.addSeries(series)
    short = [label.split("-")[0] if label != "unknown" else "?" for label in labels]  # "0.3" = 0.3 to 0.4
    _category_axes(chart, series, short, max(data.health_buckets.values(), default=0), "memories")
    chart.axes(Qt.Orientation.Horizontal)[0].setTitleText("health (buckets of 0.1)")
    series.setObjectName("health")
    return chart


def _bucket_low(label: str) -> float | None:
    try:
        return float(label.split("-")[0])
    except ValueError:
        return None


def types_chart(chart: QChart, data: ChartData, dark: bool) -> QChart:
    """Memories by type, biggest first, each category labelled with its count."""
    reset(chart, "Memories by type", dark)
    series = QHorizontalBarSeries()
    bar = QBarSet("memories")
    ordered = list(reversed(data.types.items()))  # biggest at the top
    bar.append([float(count) for _name, count in ordered])
    series.append(bar)
    chart.addSeries(series)
    labels = [f"{name} ({count:,})" for name, count in ordered]
    _category_axes(chart, series, labels, max(data.types.values(), default=0), "memories", horizontal=True)
    chart.legend().hide()
    series.setObjectName("types")
    return chart


def sync_chart(chart: QChart, data: ChartData, dark: bool) -> QChart:
    """Sync status as a pie with counts and percentages."""
    reset(chart, "Sync status", dark)
    series = QPieSeries()
    total = sum(data.sync_statuses.values()) or 1
    for status, count in data.sync_statuses.items():
        piece = series.append(f"{status} {count:,} ({count * 100 / total:.0f}%)", count)
        if status in SYNC_COLOURS:
            piece.setColor(QColor(SYNC_COLOURS[status]))
    series.setPieSize(0.7)
    chart.addSeries(series)
    chart.legend().setAlignment(Qt.AlignmentFlag.AlignRight)
    series.setObjectName("sync")
    return chart


def growth_chart(chart: QChart, data: ChartData, dark: bool) -> QChart:
    """Total memories over time (by creation day)."""
    title = "Growth over time"
    if data.undated:
        title += f" ({data.undated:,} without a readable creation date)"
    reset(chart, title, dark)
    series = QLineSeries()
    series.setName("memories (cumulative)")
    points = cumulative(data.growth)
    if len(points) == 1:  # one day: draw a flat line across it so there is something to see
        points = [(points[0][0], points[0][1]), (points[0][0], points[0][1])]
    for day, running in points:
        series.append(_msecs(day), running)
    chart.addSeries(series)
    x_axis = QDateTimeAxis()
    span = (points[-1][0] - points[0][0]).days if points else 0
    x_axis.setFormat("MMM d" if span < 60 else ("MMM yyyy" if span < 1000 else "yyyy"))
    x_axis.setTickCount(6 if span else 2)
    if points:
        start, end = _msecs(points[0][0]), _msecs(points[-1][0])
        if end == start:
            start, end = start - 86_400_000, end + 86_400_000
        x_axis.setRange(QDateTime.fromMSecsSinceEpoch(int(start)), QDateTime.fromMSecsSinceEpoch(int(end)))
    chart.addAxis(x_axis, Qt.AlignmentFlag.AlignBottom)
    series.attachAxis(x_axis)
    y_axis = QValueAxis()
    y_axis.setLabelFormat("%d")
    y_axis.setRange(0, max(1, points[-1][1] if points else 1) * 1.05)
    y_axis.applyNiceNumbers()
    chart.addAxis(y_axis, Qt.AlignmentFlag.AlignLeft)
    series.attachAxis(y_axis)
    chart.legend().hide()
    series.setObjectName("growth")
    return chart


def scatter_chart(chart: QChart, data: ChartData, dark: bool) -> QChart:
    """Importance (x, points spread sideways around each value) against health (y); bigger
    markers where more memories share a point."""
    sampled = f" (estimated from a sample of {data.scatter_sampled:,})" if data.scatter_sampled else ""
    reset(chart, f"Importance vs health{sampled}", dark)
    bands: list[QScatterSeries] = []
    for _upper, label, size in DENSITY:
        series = QScatterSeries()
        series.setName(label)
        series.setMarkerSize(size)
        series.setBorderColor(QColor(0, 0, 0, 0))
        bands.append(series)
    for importance, health, count in data.scatter:
        bands[_band(count)].append(importance + _spread(health), float(health))
    x_axis = _stepped_axis(0.5, 10.5, 1.0, 1.0, "%d", "importance")
    y_axis = _stepped_axis(-0.03, 1.03, 0.0, 0.2, "%.1f", "health")
    chart.addAxis(x_axis, Qt.AlignmentFlag.AlignBottom)
    chart.addAxis(y_axis, Qt.AlignmentFlag.AlignLeft)
    for series in bands:
        if series.count():
            chart.addSeries(series)
            series.attachAxis(x_axis)
            series.attachAxis(y_axis)
    return chart


def _spread(health: float) -> float:
    """A fixed sideways offset (within ±0.3) per health value, so the points of one importance
    form a readable cloud instead of a solid stripe; the same value always lands in the same place."""
    return (random.Random(round(health * 1000)).random() - 0.5) * 0.6


def _stepped_axis(low: float, high: float, anchor: float, step: float, label: str, title: str) -> QValueAxis:
    """A value axis with a tick on every ``step`` from ``anchor`` (so labels sit on the data)."""
    axis = QValueAxis()
    axis.setRange(low, high)
    axis.setTickType(QValueAxis.TickType.TicksDynamic)
    axis.setTickAnchor(anchor)
    axis.setTickInterval(step)
    axis.setLabelFormat(label)
    axis.setTitleText(title)
    return axis


def _band(count: int) -> int:
    for index, (upper, _label, _size) in enumerate(DENSITY):
        if upper is None or count <= upper:
            return index
    return len(DENSITY) - 1


def _category_axes(chart: QChart, series: QAbstractBarSeries, labels: list[str], top: int, title: str,
                   horizontal: bool = False) -> None:
    """Categories along the bottom (or the left, for horizontal bars) and counts on the other axis."""
    x_axis = QBarCategoryAxis()
    x_axis.append(labels)
    chart.addAxis(x_axis, Qt.AlignmentFlag.AlignLeft if horizontal else Qt.AlignmentFlag.AlignBottom)
    series.attachAxis(x_axis)
    y_axis = QValueAxis()
    y_axis.setRange(0, max(1, top) * 1.15)
    y_axis.setLabelFormat("%d")
    y_axis.applyNiceNumbers()
    y_axis.setTitleText(title)
    chart.addAxis(y_axis, Qt.AlignmentFlag.AlignBottom if horizontal else Qt.AlignmentFlag.AlignLeft)
    series.attachAxis(y_axis)


def _msecs(day: date) -> float:
    return datetime.combine(day, time(12)).timestamp() * 1000
