"""The Sync panel: the selected file's sync state, Sync now and the conflicts kept."""
