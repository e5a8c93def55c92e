"""The `limitguard` command line: one module per command (see main.py), shared options in options.py."""
