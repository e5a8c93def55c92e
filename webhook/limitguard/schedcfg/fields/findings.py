"""Findings: one problem (or note) about one place in the input, as Kubernetes field errors render.

A finding renders in the style of Kubernetes field errors (apimachinery's ``validation/field``), e.g.
``profiles[0].pluginConfig[1].args.resources["nvidia.com/gpu"].type: Unsupported value: "MostAlocated":
supported values: "LeastAllocated", "MostAllocated"``, so operators recognise the format from kubectl.
Every rule builds its findings here; ``limitguard.schedcfg.report`` gathers them into a report.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")

_MAX_VALUE_CHARS = 120


class _Missing:
    """Marker for "no value to show" (distinct from a real ``None``/null value)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


def prefix_path(prefix: str, path: str) -> str:
    """Put ``prefix`` (e.g. ``data[scheduler-config.yaml]``) in front of ``path``."""
    if not prefix:
        return path
    if not path:
        return prefix
    return prefix + (path if path.startswith("[") else "." + path)


def format_value(value: Any) -> str:
    """Render a value like Kubernetes field errors do: strings quoted, numbers bare, JSON otherwise."""
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=False, separators=(", ", ": "), default=str)
    except (TypeError, ValueError):  # pragma: no cover - default=str makes this nearly impossible
        text = repr(value)
    if len(text) > _MAX_VALUE_CHARS:
        text = text[: _MAX_VALUE_CHARS - 3] + "..."
    return text


@dataclass(frozen=True)
class Finding:
    """One problem (or note) about one place in the input.

    ``message`` is the complete human text after the path (it already shows the value); ``value`` is kept
    separately for machine consumers (JSON output).
    """

    severity: Severity
    path: str
    message: str
    rule: str
    value: Any = MISSING
    document: int | None = None
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form; ``value`` is omitted when there is none."""
        out: dict[str, Any] = {
            "severity": self.severity,
            "path": self.path,
            "message": self.message,
            "rule": self.rule,
            "text": str(self),
        }
        if self.value is not MISSING:
            out["value"] = _jsonable(self.value)
        if self.document is not None:
            out["document"] = self.document
        if self.line is not None:
            out["line"] = self.line
            out["column"] = self.column
        return out


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def invalid(path: str, value: Any, detail: str, rule: str, severity: Severity = "error") -> Finding:
    """Kubernetes ``field.Invalid``: ``path: Invalid value: <value>: <detail>``."""
    return Finding(severity, path, f"Invalid value: {format_value(value)}: {detail}", rule, value)


def unsupported(path: str, value: Any, supported: Sequence[str], rule: str) -> Finding:
    """Kubernetes ``field.NotSupported``."""
    listed = ", ".join(json.dumps(s) for s in supported)
    return Finding(
        "error", path, f"Unsupported value: {format_value(value)}: supported values: {listed}", rule, value
    )


def required(path: str, detail: str, rule: str) -> Finding:
    """Kubernetes ``field.Required``."""
    return Finding("error", path, f"Required value: {detail}" if detail else "Required value", rule)


def duplicate(path: str, value: Any, rule: str, detail: str = "") -> Finding:
    """Kubernetes ``field.Duplicate``."""
    text = f"Duplicate value: {format_value(value)}" + (f": {detail}" if detail else "")
    return Finding("error", path, text, rule, value)


def forbidden(path: str, detail: str, rule: str) -> Finding:
    """Kubernetes ``field.Forbidden``."""
    return Finding("error", path, f"Forbidden: {detail}", rule)


def warning(path: str, detail: str, rule: str, value: Any = MISSING) -> Finding:
    return Finding("warning", path, detail, rule, value)


def info(path: str, detail: str, rule: str, value: Any = MISSING) -> Finding:
    return Finding("info", path, detail, rule, value)


def relocate(
    finding: Finding,
    *,
    prefix: str = "",
    document: int | None = None,
    line: int | None = None,
    column: int | None = None,
) -> Finding:
    """Copy of ``finding`` moved under ``prefix`` and given a document index / location if it has none."""
    return replace(
        finding,
        path=prefix_path(prefix, finding.path),
        document=finding.document if finding.document is not None else document,
        line=finding.line if finding.line is not None else line,
        column=finding.column if finding.column is not None else column,
    )
