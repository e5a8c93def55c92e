"""aiohttp wiring: the application, the one middleware every POST route goes through, TLS, metrics, logs."""
