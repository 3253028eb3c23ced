"""Package data: icons (SVG and rendered PNGs), the dark style sheet, the desktop entry, the
AppStream metainfo and the MIME type of Ora memory files. Read with :func:`importlib.resources.files`."""
