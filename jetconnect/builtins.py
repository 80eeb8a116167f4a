"""The connectors that ship with the core (registered before any plugin)."""
