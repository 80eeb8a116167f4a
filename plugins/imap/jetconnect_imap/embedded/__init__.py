"""The embedded store: jetconnect's own SQLite imitation of Hazelcast's maps, journals, caches
and lists, for notebooks, demos and tests without a server (``sqlite:///abs/path.db``)."""
