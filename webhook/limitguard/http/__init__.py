"""aiohttp wiring: the application, the one transport every POST route goes through, TLS, metrics, logs."""
