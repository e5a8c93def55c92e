"""The one answer type of every admission decision, with its constructors.

Modelled on controller-runtime's `pkg/webhook/admission/response.go`: policy code builds a Response
with `allowed`, `denied`, `warned`, `patched` or `errored`; the transport
(`limitguard.admission.review`) turns it into an AdmissionReview in the caller's API version. The
type knows nothing of HTTP or of the AdmissionReview's JSON, so the pure core can return it.
"""

from __future__ import annotations

import json
from base64 import b64encode
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from limitguard.core.config import Enforcement
from limitguard.core.text import clip

FORBIDDEN = 403
BAD_REQUEST = 400
MAX_WARNING_LENGTH = 120
#: A denial names every resource that does not fit, with its numbers: a few hundred characters. Longer
#: means the message repeats input (names, values) at a length the sender chose.
MAX_MESSAGE_LENGTH = 4096


@dataclass(frozen=True, slots=True)
class JsonPatch:
    """RFC 6902 operations, frozen as their JSON text.

    One patch is shared by every answer for pods of the same shape (the mutating webhook memoises
    its answers), so it cannot be a list of dicts that whoever applies it could change afterwards;
    `operations()` hands out a fresh copy. The text is what the AdmissionReview carries anyway, in
    base64: encoded once with the patch, not once per answer that shares it."""

    encoded: bytes
    base64_text: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "base64_text", b64encode(self.encoded).decode())

    @classmethod
    def of(cls, operations: Sequence[Mapping[str, Any]]) -> JsonPatch:
        return cls(json.dumps(list(operations), separators=(",", ":"), ensure_ascii=False).encode())

    def operations(self) -> list[dict[str, Any]]:
        return json.loads(self.encoded)  # type: ignore[no-any-return]


@dataclass(slots=True)
class Response:
    """One admission answer. Never modified once built (`allowed` shares one instance per reason):
    change one with dataclasses.replace. Not a frozen dataclass: its __init__ sets each of the
    seven fields through object.__setattr__, three times the cost of a plain one, and a Response
    is built for every denial, warning and patch."""

    allowed: bool
    reason: str = ""  # a short machine word for metrics and logs: fits, exceeds, excluded, ...
    code: int = 200
    message: str = ""
    warnings: tuple[str, ...] = ()
    patch: JsonPatch | None = None  # mutating webhooks only
    action: str = "allow"  # allow | deny | warn | dryrun | mutate


def warning(text: str) -> str:
    """Admission warnings are shown by kubectl on one line; keep them short."""
    return text if len(text) < MAX_WARNING_LENGTH else text[: MAX_WARNING_LENGTH - 5] + " ..."


def _short(warnings: Sequence[str]) -> tuple[str, ...]:
    return tuple([warning(text) for text in warnings])  # a list, not a generator: half the cost


_PLAIN_ALLOWS: dict[str, Response] = {}  # reason -> its answer (the reasons are a fixed set of codes)


def allowed(reason: str, *warnings: str) -> Response:
    """An allow; one shared instance per reason when there are no warnings (Response is frozen):
    most admissions are plain allows, and building one each time is measurable at thousands a second."""
    if warnings:
        return Response(True, reason, warnings=_short(warnings))
    found = _PLAIN_ALLOWS.get(reason)
    if found is None:
        found = Response(True, reason)
        if len(_PLAIN_ALLOWS) < 1024:
            _PLAIN_ALLOWS[reason] = found
    return found


def denied(reason: str, message: str, *warnings: str) -> Response:
    """A policy violation (403 Forbidden)."""
    return Response(
        False,
        reason,
        code=FORBIDDEN,
        message=clip(message, MAX_MESSAGE_LENGTH),
        warnings=_short(warnings),
        action="deny",
    )


def warned(reason: str, message: str, brief: str, *warnings: str) -> Response:
    """Allowed, with *brief* shown to the user as an admission warning and *message* kept for logs."""
    return Response(
        True,
        reason,
        message=clip(message, MAX_MESSAGE_LENGTH),
        warnings=_short((brief, *warnings)),
        action="warn",
    )


def patched(reason: str, patch: JsonPatch | Sequence[Mapping[str, Any]], *warnings: str) -> Response:
    """An allow that changes the object (*patch*: a JsonPatch, or its operations)."""
    frozen = patch if isinstance(patch, JsonPatch) else JsonPatch.of(patch)
    return Response(True, reason, warnings=_short(warnings), patch=frozen, action="mutate")


def errored(reason: str, message: str, code: int = BAD_REQUEST) -> Response:
    """A request limitguard cannot judge because the object itself is malformed (400 by default)."""
    return Response(False, reason, code=code, message=clip(message, MAX_MESSAGE_LENGTH), action="deny")


def enforce(reason: str, message: str, brief: str, enforcement: Enforcement, *warnings: str) -> Response:
    """Apply the enforcement action (like Gatekeeper's) to a policy violation."""
    if enforcement is Enforcement.DENY:
        return denied(reason, message, *warnings)
    if enforcement is Enforcement.WARN:
        return warned(reason, message, brief, *warnings)
    return Response(
        True, reason, message=clip(message, MAX_MESSAGE_LENGTH), warnings=_short(warnings), action="dryrun"
    )


def retold(response: Response, message: str) -> Response:
    """*response* with another message, clipped as every constructor clips it: an answer remembered
    for pods of one shape, told about the pod asking (dataclasses.replace costs ~2 us more)."""
    return Response(
        response.allowed,
        response.reason,
        response.code,
        clip(message, MAX_MESSAGE_LENGTH),
        response.warnings,
        response.patch,
        response.action,
    )
