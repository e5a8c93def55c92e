"""The one exception base: every error limitguard raises on purpose derives from LimitguardError.

Callers (the CLI, the HTTP transport) catch this base to turn an expected failure into a clear
message or a 400, and let anything else surface as the bug it is. Subclasses that stand for bad input
also derive from ValueError, so code written against the standard library keeps working.
"""


class LimitguardError(Exception):
    """An expected failure with a message fit for the user."""


class StatusError(LimitguardError):
    """A request this process answers with an HTTP error instead of a decision (a body over its
    limit, a replica asked to decide while it is not the leader); *status* is that HTTP status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
