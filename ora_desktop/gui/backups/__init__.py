"""Backups panel: list, back up now, restore with confirmation."""
