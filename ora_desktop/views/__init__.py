"""The window's list and search state, without Qt: what is asked, what is listed, what follows a write.

napari's shape: plain Python objects that hold the state and announce its changes through
callbacks, under thin Qt adapters (``gui/memories/model.py``, ``gui/search/controller.py``) that
forward to them. They import core and never Qt (an import contract), so their unit tests run in
the Qt-free test environment; they hold no SQL (core answers every question about rows).

- :mod:`.refresh`: how a listed view follows a :class:`~ora_desktop.core.records.Change`;
- :mod:`.facets`: facet counts shifted by an edit's old and new values;
- :mod:`.table`: the row keys, the cached pages, and the rows a change inserts, removes, repaints;
- :mod:`.search`: the search inputs and when they ask a new question;
- :mod:`.first_rows`: the first screenful read while the window starts.
"""
