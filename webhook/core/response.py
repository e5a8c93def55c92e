"""The outcome of a policy check, before it becomes an AdmissionResponse."""

from __future__ import annotations

from dataclasses import dataclass, field

from limitguard.core.config import Enforcement

FORBIDDEN = 403
BAD_REQUEST = 400
MAX_WARNING_LENGTH = 120


@dataclass(frozen=True, slots=True)
class Verdict:
    allowed: bool
    reason: str  # a short machine word for metrics and logs: fits, exceeds, excluded, ...
    message: str = ""
    code: int = 200
    warnings: tuple[str, ...] = field(default_factory=tuple)
    action: str = "allow"  # allow | deny | warn | dryrun


def warning(text: str) -> str:
    """Admission warnings are shown by kubectl on one line; keep them short."""
    return text if len(text) < MAX_WARNING_LENGTH else text[: MAX_WARNING_LENGTH - 5] + " ..."


def allow(reason: str, *warnings: str) -> Verdict:
    return Verdict(True, reason, warnings=tuple(warning(text) for text in warnings))


def reject(reason: str, message: str, code: int = BAD_REQUEST) -> Verdict:
    return Verdict(False, reason, message=message, code=code, action="deny")


def enforce(reason: str, message: str, brief: str, enforcement: Enforcement, *warnings: str) -> Verdict:
    """Apply the enforcement action (like Gatekeeper's) to a policy violation."""
    extra = tuple(warning(text) for text in warnings)
    if enforcement is Enforcement.DENY:
        return Verdict(False, reason, message=message, code=FORBIDDEN, warnings=extra, action="deny")
    if enforcement is Enforcement.WARN:
        return Verdict(True, reason, message=message, warnings=(warning(brief), *extra), action="warn")
    return Verdict(True, reason, message=message, warnings=extra, action="dryrun")
