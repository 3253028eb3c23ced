"""Charts panel: health, types, growth, sync status, importance vs health (QtCharts)."""
