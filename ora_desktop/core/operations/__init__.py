"""User-level operations: the one place a rule lives; the library, CLI, window and MCP server call these."""
