"""The sidebar: ORA_HOME's sites and agents (with counts and health), and files opened from elsewhere."""
