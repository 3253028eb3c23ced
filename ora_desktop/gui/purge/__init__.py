"""Forgetting for good (Delete permanently…, Empty trash…) and salvaging damaged files (Recover…)."""
