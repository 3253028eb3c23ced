"""Search as you type, facets with counts, quick filters, and search across every site."""
