"""One build of an out-of-tree scheduler as data: what its binary decodes, registers and builds on.

A build is a binary of koord-scheduler or of the scheduler-plugins scheduler (a project's release tag,
or its development branch at a commit); it is never called a release here, which is Kubernetes'. A
project's builds are tabled oldest first (``args.koordinator``, ``args.sigs``: next to the args kinds
they decode), each written as the one before it plus what changed, so a reviewer diffs a build against
the previous one by reading one entry. The args schemas describe the newest build (a superset); an
older build lists, through the builds after it, the top-level fields its decoder does not have yet.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol


class ArgsKindEntry(Protocol):
    """What the tables read of an args kind (``limitguard.schedcfg.args.kind.ArgsKind``)."""

    @property
    def kind(self) -> str: ...

    @property
    def plugin(self) -> str: ...


#: Kind -> top-level field -> the first tag (or branch) of the project whose decoder has it.
FieldsAdded = Mapping[str, Mapping[str, str]]


@dataclass(frozen=True)
class Build:
    """One build of an out-of-tree scheduler: a tagged release of its project, or (``tagged=False``)
    its development branch at a commit."""

    version: str
    #: Kubernetes minor of the kube-scheduler code it is built on (go.mod k8s.io/kubernetes).
    kubernetes_minor: int
    #: The commit its tables were read at, and that commit's date (YYYY-MM-DD).
    commit: str
    date: str
    #: The args kinds its scheme registers (the in-tree ones of its minor come on top).
    kinds: tuple[ArgsKindEntry, ...]
    #: Registered plugin -> the extension points its type implements.
    plugins: Mapping[str, frozenset[str]]
    #: Fields this build's decoder has that the build before it lacked.
    fields_added: FieldsAdded = field(default_factory=dict)
    tagged: bool = True

    @property
    def name(self) -> str:
        """``v1.8.0``, or ``main (903da7df)`` for a development branch."""
        return self.version if self.tagged else f"{self.version} ({self.commit[:8]})"

    def then(
        self,
        version: str,
        kubernetes_minor: int,
        commit: str,
        date: str,
        *,
        kinds: tuple[ArgsKindEntry, ...] | None = None,
        plugins: Mapping[str, frozenset[str]] | None = None,
        fields_added: FieldsAdded | None = None,
        tagged: bool = True,
    ) -> Build:
        """The next build: this one with what changed (kinds and plugins given whole when they change)."""
        return Build(
            version,
            kubernetes_minor,
            commit,
            date,
            self.kinds if kinds is None else kinds,
            self.plugins if plugins is None else plugins,
            fields_added or {},
            tagged,
        )


def replaced(kinds: tuple[ArgsKindEntry, ...], *entries: ArgsKindEntry) -> tuple[ArgsKindEntry, ...]:
    """``kinds`` with each of ``entries`` in place of the kind of the same name, or appended."""
    by_kind = {entry.kind: entry for entry in entries}
    kept = tuple(by_kind.pop(entry.kind, entry) for entry in kinds)
    return kept + tuple(by_kind.values())


def fields_missing(builds: tuple[Build, ...], build: Build) -> dict[str, dict[str, str]]:
    """Kind -> field -> first tag having it, for each field a build after ``build`` added."""
    missing: dict[str, dict[str, str]] = {}
    for later in builds[builds.index(build) + 1 :]:
        for kind, fields in later.fields_added.items():
            for name, since in fields.items():
                missing.setdefault(kind, {}).setdefault(name, since)
    return missing


__all__ = ["ArgsKindEntry", "Build", "FieldsAdded", "fields_missing", "replaced"]
