"""The detail pane: one memory in full, every field editable, links, chain, health explained."""
