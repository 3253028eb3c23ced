"""Jobs panel: schedule, run now with dry-run preview, history, progress and cancel; the in-app scheduler."""
