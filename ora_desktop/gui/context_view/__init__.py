"""The Context tab: exactly what ``store.context()`` would hand the agent, section by section."""
