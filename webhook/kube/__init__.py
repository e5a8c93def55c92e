"""The cluster state cache and the feeds that fill it (a file today, list/watch in a cluster)."""
