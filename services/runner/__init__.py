"""The runner service: runs agents, publishes frames, records everything through the store."""
