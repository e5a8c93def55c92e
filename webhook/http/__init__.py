"""aiohttp wiring: routes, TLS, lifecycle."""
