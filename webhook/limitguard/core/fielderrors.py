"""Every problem of one configuration document in one run, as kube-scheduler's validation reports them.

kube-scheduler's `ValidateKubeSchedulerConfiguration` (k8s.io/kubernetes
`pkg/scheduler/apis/config/validation/validation.go`) appends each section's `field.ErrorList` and
returns the aggregate, so a file with mistakes in four sections shows all four at once. limitguard's
loader does the same over its stages - the JSON Schema, then each section's rules, then the
extender's scorers - into one `FieldErrors`:

- a rule that needs a value an earlier stage found invalid asks `invalid(path)` and skips only
  itself (the rest of the section is still checked);
- a later stage's complaint about a value an earlier stage already reported is dropped (the schema
  and a section's parser both know that a pool needs a name: the user reads it once).
"""

from __future__ import annotations

from collections.abc import Iterator

from limitguard.core.paths import path_prefixes


class FieldError(str):
    """One problem as its text, `path: detail` (`<root>: detail` for the document itself), that also
    knows its `path`: a str, so it prints, joins and compares as the message it is."""

    path: str
    detail: str

    def __new__(cls, path: str, detail: str) -> FieldError:
        error = super().__new__(cls, f"{path}: {detail}" if path else f"<root>: {detail}")
        error.path, error.detail = path, detail
        return error


class FieldErrors:
    """The problems found so far (kube-scheduler's `field.ErrorList`), in the order found."""

    def __init__(self) -> None:
        self._errors: list[FieldError] = []
        self._reported: set[str] = set()  # paths with a problem
        self._around: set[str] = set()  # those paths and every path they lie under
        self._settled: set[str] = set()  # paths reported by stages already over

    def add(self, path: str, detail: str) -> None:
        """Report a problem, unless an earlier stage reported this value (or what holds it)."""
        if any(prefix in self._settled for prefix in path_prefixes(path)) or "" in self._settled:
            return
        self._errors.append(FieldError(path, detail))
        self._reported.add(path)
        self._around.update(path_prefixes(path))

    def extend(self, errors: list[FieldError]) -> None:
        for error in errors:
            self.add(error.path, error.detail)

    def settle(self) -> None:
        """End a stage: what it reported now stands for those values in every later stage."""
        self._settled |= self._reported

    def covers(self, path: str) -> bool:
        """Whether a problem was reported at *path* or at what holds it (the value itself is wrong)."""
        return "" in self._reported or any(prefix in self._reported for prefix in path_prefixes(path))

    def invalid(self, *paths: str) -> bool:
        """Whether a problem was reported at any of *paths*, inside one, or at what holds one: a rule
        over those values would judge a value that is not the user's (or not there)."""
        return any(path in self._around or self.covers(path) for path in paths)

    def __bool__(self) -> bool:
        return bool(self._errors)

    def __iter__(self) -> Iterator[FieldError]:
        return iter(self._errors)

    def __len__(self) -> int:
        return len(self._errors)

    def texts(self) -> list[str]:
        return [str(error) for error in self._errors]
