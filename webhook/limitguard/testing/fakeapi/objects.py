"""The stored objects of the fake apiserver, its field selectors and its wire pieces (events, Status).

Pure data: what a change looks like to a watch with a selector is decided here
(cache_watcher.go convertToWatchEvent), the HTTP side only writes the lines out.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from limitguard.errors import LimitguardError

KIND_NAMES = {"nodes": "Node", "pods": "Pod", "namespaces": "Namespace", "configmaps": "ConfigMap"}
SELECTABLE_FIELDS = {
    "nodes": frozenset({"metadata.name"}),
    "pods": frozenset({"metadata.name", "metadata.namespace", "spec.nodeName", "status.phase"}),
    "namespaces": frozenset({"metadata.name", "status.phase"}),
    "configmaps": frozenset({"metadata.name", "metadata.namespace"}),
}
LEASES = "leases"
LEASE_API_VERSION = "coordination.k8s.io/v1"
LEASES_PREFIX = "/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
SELECTABLE_FIELDS[LEASES] = frozenset({"metadata.name", "metadata.namespace"})


def object_key(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata") or {}
    namespace = metadata.get("namespace")
    return f"{namespace}/{metadata['name']}" if namespace else str(metadata["name"])


def selectable_fields(obj: Mapping[str, Any]) -> dict[str, str]:
    metadata = obj.get("metadata") or {}
    return {
        "metadata.name": str(metadata.get("name") or ""),
        "metadata.namespace": str(metadata.get("namespace") or ""),
        "spec.nodeName": str((obj.get("spec") or {}).get("nodeName") or ""),
        "status.phase": str((obj.get("status") or {}).get("phase") or ""),
    }


def with_resource_version(body: bytes, rv: int) -> bytes:
    obj = orjson.loads(body)
    obj.setdefault("metadata", {})["resourceVersion"] = str(rv)
    return orjson.dumps(obj)


class SelectorError(LimitguardError, ValueError):
    pass


@dataclass(frozen=True)
class FieldSelector:
    requirements: tuple[tuple[str, bool, str], ...]  # (field, equal?, value)

    @classmethod
    def parse(cls, kind: str, text: str) -> FieldSelector:
        requirements = []
        for term in filter(None, (part.strip() for part in text.split(","))):
            if "!=" in term:
                name, value = term.split("!=", 1)
                equal = False
            elif "==" in term:
                name, value = term.split("==", 1)
                equal = True
            elif "=" in term:
                name, value = term.split("=", 1)
                equal = True
            else:
                raise SelectorError(f'invalid selector: "{text}"; can\'t understand "{term}"')
            if name not in SELECTABLE_FIELDS[kind]:
                raise SelectorError(f"field label not supported: {name}")
            requirements.append((name, equal, value))
        return cls(tuple(requirements))

    def matches(self, fields: Mapping[str, str]) -> bool:
        return all((fields.get(name, "") == value) == equal for name, equal, value in self.requirements)


@dataclass(slots=True)
class Stored:
    key: str
    rv: int
    body: bytes  # the object as served; metadata.resourceVersion == rv
    fields: dict[str, str]


@dataclass(slots=True)
class Change:
    rv: int
    kind: str
    type: str  # ADDED, MODIFIED, DELETED (as stored, before selector filtering)
    current: Stored | None  # None for DELETED
    previous: Stored | None  # None for ADDED

    def visible_as(self, selector: FieldSelector) -> tuple[str, bytes] | None:
        """The event a watch with *selector* sees (cache_watcher.go convertToWatchEvent)."""
        now = self.current is not None and selector.matches(self.current.fields)
        before = self.previous is not None and selector.matches(self.previous.fields)
        if now and before:
            return "MODIFIED", self.current.body  # type: ignore[union-attr]
        if now:
            return "ADDED", self.current.body  # type: ignore[union-attr]
        if before:
            return "DELETED", with_resource_version(self.previous.body, self.rv)  # type: ignore[union-attr]
        return None


def event_line(event_type: str, body: bytes) -> bytes:
    return b'{"type":"' + event_type.encode() + b'","object":' + body + b"}\n"


def status_body(code: int, reason: str, message: str) -> bytes:
    return orjson.dumps(
        {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": message,
            "reason": reason,
            "code": code,
        }
    )


@dataclass(eq=False)  # identity: watchers live in a set
class Watcher:
    kind: str
    selector: FieldSelector
    pending: list[bytes] = field(default_factory=list)
    wakeup: asyncio.Event = field(default_factory=asyncio.Event)
    closing: str = ""  # "", "clean", "abort" or "silent" (a dead path: nothing more, no end)

    def push(self, line: bytes) -> None:
        self.pending.append(line)
        self.wakeup.set()


@dataclass(eq=False)
class WatchPause:
    """Hold a kind's watch streams after `remaining` more events (see FakeApiServer.pause_watch)."""

    remaining: int
    holding: asyncio.Event = field(default_factory=asyncio.Event)  # set once the streams stopped
    released: asyncio.Event = field(default_factory=asyncio.Event)

    def release(self) -> None:
        self.released.set()

    def take(self, lines: list[bytes]) -> list[bytes]:
        """The lines that may go out before the pause holds; counts them."""
        if self.released.is_set():
            return lines
        allowed = lines[: self.remaining]
        self.remaining -= len(allowed)
        if self.remaining == 0:
            self.holding.set()
        return allowed


@dataclass(frozen=True)
class Snapshot:
    rv: int
    keys: list[str]
    items: list[Stored]


@dataclass(frozen=True)
class RequestSeen:
    kind: str
    watch: bool
    params: dict[str, str]


@dataclass(frozen=True)
class LabelSelector:
    """A `labelSelector` query parameter: `k=v`, `k==v`, `k!=v`, `k`, `!k`, `k in (a,b)`, `k notin (a,b)`,
    comma = AND (apimachinery's labels.Parse)."""

    requirements: tuple[tuple[str, str, frozenset[str]], ...]  # (key, operator, values)

    @classmethod
    def parse(cls, text: str) -> LabelSelector:
        terms, depth, start = [], 0, 0
        for index, char in enumerate(text):
            depth += {"(": 1, ")": -1}.get(char, 0)
            if char == "," and depth == 0:
                terms.append(text[start:index])
                start = index + 1
        terms.append(text[start:])
        requirements = []
        for term in (t.strip() for t in terms):
            if not term:
                continue
            words = term.split()
            if len(words) >= 2 and words[1] in ("in", "notin"):
                values = " ".join(words[2:]).strip()
                if not (values.startswith("(") and values.endswith(")")):
                    raise SelectorError(f"unable to parse requirement: {term!r}")
                items = frozenset(v.strip() for v in values[1:-1].split(",") if v.strip())
                requirements.append((words[0], words[1], items))
            elif "!=" in term:
                key, value = term.split("!=", 1)
                requirements.append((key.strip(), "!=", frozenset({value.strip()})))
            elif "=" in term:
                key, value = term.replace("==", "=", 1).split("=", 1)
                requirements.append((key.strip(), "=", frozenset({value.strip()})))
            elif term.startswith("!"):
                requirements.append((term[1:].strip(), "!", frozenset()))
            else:
                requirements.append((term, "exists", frozenset()))
        return cls(tuple(requirements))

    def matches(self, labels: Mapping[str, str]) -> bool:
        for key, operator, values in self.requirements:
            present, value = key in labels, labels.get(key)
            held = {
                "=": present and value in values,
                "in": present and value in values,
                "!=": not present or value not in values,
                "notin": not present or value not in values,
                "exists": present,
                "!": not present,
            }[operator]
            if not held:
                return False
        return True
