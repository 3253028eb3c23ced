"""Curating: new, delete/restore, bulk edit, supersede, merge, promote — all undoable."""
