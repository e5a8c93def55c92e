"""The pure policy core: plain functions over plain data, no I/O."""
