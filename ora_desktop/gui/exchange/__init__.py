"""File > Export… and File > Import…: the window's face of ``core.operations`` export/import."""
