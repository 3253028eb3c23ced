"""The Graph tab: a memory's related_to links and supersession chains, drawn and clickable."""
