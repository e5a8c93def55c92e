"""Reports of the scheduler-configuration validator: every finding of one input, and the scheduler
each configuration in it was judged for, as text or JSON (the findings themselves are
``limitguard.schedcfg.fields.findings``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .fields.findings import SEVERITIES, Finding, Severity

__all__ = ["SEVERITIES", "Finding", "ReaderChoice", "Report", "Severity"]


@dataclass(frozen=True)
class ReaderChoice:
    """The scheduler one configuration of the input was judged for, and why (``path``: where it is).

    ``spec`` is how ``--scheduler`` names that build (``koord-scheduler@v1.8.0``), so a verdict reached
    under ``auto`` can be repeated, or pinned, with the same build; ``build_name`` is the build's own
    version (``v1.8.0``, ``main (903da7df)``; None for kube-scheduler, whose build is the Kubernetes
    release); ``kubernetes`` the Kubernetes release whose in-tree rules applied. The JSON keys are the
    documented ones: ``build`` the spec, ``release`` the project's version."""

    path: str
    scheduler: str
    spec: str
    build_name: str | None
    kubernetes: str
    reason: str
    certain: bool = True

    def describe(self) -> str:
        name = self.scheduler if self.build_name is None else f"{self.scheduler} {self.build_name}"
        where = f"{self.path}: " if self.path else ""
        guess = "" if self.certain else " (not certain)"
        return f"{where}judged for {name} (Kubernetes {self.kubernetes}){guess}: {self.reason}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "scheduler": self.scheduler,
            "build": self.spec,
            "release": self.build_name,
            "kubernetesVersion": self.kubernetes,
            "reason": self.reason,
            "certain": self.certain,
        }


@dataclass
class Report:
    """All findings for one input (a file, stdin, or one ConfigMap), and the scheduler each configuration
    in it was judged for."""

    source: str = "<input>"
    findings: list[Finding] = field(default_factory=list)
    readers: list[ReaderChoice] = field(default_factory=list)

    @property
    def certain(self) -> bool:
        """False when the scheduler of some configuration was guessed."""
        return all(reader.certain for reader in self.readers)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "warning"]

    @property
    def infos(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "info"]

    @property
    def ok(self) -> bool:
        """True when there is no error (warnings and notes are allowed)."""
        return not self.errors

    def add(self, finding: Finding) -> None:
        self.findings.append(finding)

    def extend(self, findings: Iterable[Finding]) -> None:
        self.findings.extend(findings)

    def passes(self, *, strict: bool = False) -> bool:
        """The verdict: no errors, and with ``strict`` no warnings either."""
        return self.ok and not (strict and self.warnings)

    def to_dict(self, *, strict: bool = False) -> dict[str, Any]:
        return {
            "file": self.source,
            "valid": self.passes(strict=strict),
            "errors": [f.to_dict() for f in self.errors],
            "warnings": [f.to_dict() for f in self.warnings],
            "infos": [f.to_dict() for f in self.infos],
            "schedulers": [r.to_dict() for r in self.readers],
        }

    def format(self, *, show_info: bool = False, strict: bool = False) -> str:
        """Text form: one line per finding (``file:line:col: severity: path: message``) and a summary."""
        lines = [f"{self.source}: {reader.describe()}" for reader in self.readers]
        for finding in self.findings:
            if finding.severity == "info" and not show_info:
                continue
            where = self.source
            if finding.line is not None:
                where += f":{finding.line}:{finding.column}"
            elif finding.document is not None:
                where += f" (document {finding.document})"
            label = "note" if finding.severity == "info" else finding.severity
            lines.append(f"{where}: {label}: {finding}")
        n_err, n_warn = len(self.errors), len(self.warnings)
        verdict = "valid" if self.ok else "invalid"
        if self.ok and not self.passes(strict=strict):
            verdict = "invalid (--strict: warnings count as errors)"
        lines.append(f"{self.source}: {verdict} ({_plural(n_err, 'error')}, {_plural(n_warn, 'warning')})")
        return "\n".join(lines)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")
