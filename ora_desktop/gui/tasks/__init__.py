"""Task panel: a spawned task agent's description, status, input and output."""
