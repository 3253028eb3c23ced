"""The memory table: a model holding only row ids (Anki's browser) and its view."""
