"""The shape of one entry of the args registry."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..fields.findings import Finding
from ..tables.readers import Reader
from ..tables.releases import Release

#: (args after defaulting, path of ``args``, the scheduler reading them) -> findings.
Validate = Callable[[dict[str, Any], str, Reader], list[Finding]]
#: Mutates args in place like kube-scheduler's SetDefaults_<Kind>; returns warnings for replaced values.
Default = Callable[[dict[str, Any], str, Reader], list[Finding]]


def no_rules(_args: dict[str, Any], _path: str, _reader: Reader) -> list[Finding]:
    return []


@dataclass(frozen=True)
class ArgsKind:
    """One args kind: the plugin it configures, its schema, its defaulting and its rules."""

    kind: str
    plugin: str
    validate: Validate = no_rules
    default: Default = no_rules
    in_tree: bool = True
    since_minor: int = 0  # first Kubernetes minor whose scheme registers the kind
    #: Folder of its schema under limitguard/schemas/: out-of-tree projects get their own (two projects may
    #: name a kind alike, e.g. CoschedulingArgs, with different fields).
    schema_dir: str = "args"

    @property
    def schema_path(self) -> str:
        return f"{self.schema_dir}/{self.kind}.schema.json"

    def exists_in(self, release: Release) -> bool:
        return release.minor >= self.since_minor
