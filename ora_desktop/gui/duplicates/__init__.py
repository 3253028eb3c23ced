"""The Duplicates panel: groups of memories that say the same thing, merged in one undo step."""
