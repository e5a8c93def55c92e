"""Entry points: find KubeSchedulerConfigurations in any input form and validate them.

Input forms (SPEC 6): a bare configuration, a ConfigMap whose data values hold one (any key), a
``kind: List`` of those, multi-document YAML of any of these, and - for documentation snippets - a
fragment without apiVersion/kind whose top-level keys are all KubeSchedulerConfiguration fields
(validated as v1, with a warning). Other documents are skipped with a note.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from limitguard.core.kubeversion import supported_text
from limitguard.core.paths import path_join

from . import schemas
from .configcheck import not_served, served_but_unchecked, validate_config
from .documents import Document, YamlInputError, load_documents
from .fields.findings import (
    Finding,
    Severity,
    info,
    prefix_path,
    relocate,
    unsupported,
    warning,
)
from .report import ReaderChoice, Report
from .schedulers import AUTO, CHOICES, SchedulerChoiceError, choose, resolve_leniently
from .tables.api import CONFIG_VERSIONS, GROUP, KIND, api_version
from .tables.readers import Reader
from .tables.releases import API_REMOVED_IN, DEFAULT_RELEASE, Release, reader_gates

API_VERSIONS: dict[str, str] = {api_version(v): v for v in CONFIG_VERSIONS}
HELM_HINT = (
    "the input looks like an unrendered Helm template ({{ ... }}): run `helm template` first and "
    "validate its output"
)

Locator = Callable[[str], "tuple[int, int] | None"]
#: A document of another kind judged by its own rules (kind -> its findings): `limitguard validate`
#: hands in limitguard's own LimitGuardConfiguration, whose loader lives in a layer above this one.
KindCheck = Callable[[dict[str, Any]], list[Finding]]


def has_helm_directives(text: str) -> bool:
    return "{{" in text and "}}" in text


def _v1_fields() -> frozenset[str]:
    return frozenset(schemas.load_schema(schemas.config_schema_path("v1"))["properties"])


class _Validation:
    """Collects findings of one input; ``configs`` counts the configurations found (valid or not)."""

    def __init__(
        self,
        report: Report,
        release: Release = DEFAULT_RELEASE,
        scheduler: str = AUTO,
        named_by: str = "--scheduler",
        refused_gates: Severity = "error",
        other_kinds: Mapping[str, KindCheck] | None = None,
    ) -> None:
        self.report = report
        self.other_kinds = other_kinds or {}
        self.release = release
        self.scheduler = scheduler
        self.named_by = named_by
        # --feature-gates the reader refuses: an error for the CLI (that scheduler would not start), a
        # warning for the webhook (its gates are the server's setting, not the ConfigMap's fault)
        self.refused_gates = refused_gates
        self.configs = 0

    def emit(self, findings: list[Finding], *, prefix: str, document: int | None, locate: Locator) -> None:
        placed = []
        for finding in findings:
            position = locate(finding.path)
            line, column = position if position else (None, None)
            placed.append(relocate(finding, prefix=prefix, document=document, line=line, column=column))
        placed.sort(key=lambda f: (f.line is None, f.line or 0, f.column or 0))
        self.report.extend(placed)

    # ----------------------------------------------------------------------------------- dispatch
    def document(
        self,
        data: Any,
        *,
        prefix: str,
        structural: str,
        document: int | None,
        outer: Document | None,
        allow_fragment: bool,
    ) -> None:
        """Validate whatever ``data`` is; ``structural`` is its path inside ``outer`` (for positions)."""

        def outer_locate(path: str) -> tuple[int, int] | None:
            return outer.locate(prefix_path(structural, path)) if outer else None

        if data is None:
            return
        if not isinstance(data, dict):
            self.emit(
                [info("", "document is not a mapping; skipped", "input.skipped")],
                prefix=prefix,
                document=document,
                locate=outer_locate,
            )
            return
        kind = data.get("kind")
        if kind == KIND:
            self.config(data, prefix=prefix, document=document, locate=outer_locate)
        elif kind == "ConfigMap":
            self.configmap(data, prefix=prefix, structural=structural, document=document, outer=outer)
        elif isinstance(kind, str) and kind in self.other_kinds:
            self.configs += 1
            self.emit(self.other_kinds[kind](data), prefix=prefix, document=document, locate=outer_locate)
        elif isinstance(kind, str) and kind.endswith("List") and isinstance(data.get("items"), list):
            for i, item in enumerate(data["items"]):
                self.document(
                    item,
                    prefix=path_join(prefix, "items", i),
                    structural=path_join(structural, "items", i),
                    document=document,
                    outer=outer,
                    allow_fragment=False,
                )
        elif (
            allow_fragment
            and "apiVersion" not in data
            and "kind" not in data
            and data
            and {str(k) for k in data} <= _v1_fields()
        ):
            note = warning(
                "",
                f"apiVersion and kind are missing: validated as a {GROUP}/v1 {KIND} fragment "
                "(kube-scheduler itself needs both)",
                "input.fragment",
            )
            self.emit([note], prefix=prefix, document=document, locate=outer_locate)
            self.config(
                {"apiVersion": f"{GROUP}/v1", "kind": KIND, **data},
                prefix=prefix,
                document=document,
                locate=outer_locate,
            )
        else:
            what = f"kind {json.dumps(kind)}" if kind is not None else "a document without kind"
            self.emit(
                [info("", f"{what} is not a {KIND}; skipped", "input.skipped")],
                prefix=prefix,
                document=document,
                locate=outer_locate,
            )

    def config(self, data: dict[str, Any], *, prefix: str, document: int | None, locate: Locator) -> None:
        self.configs += 1
        api_version = data.get("apiVersion")
        version = API_VERSIONS.get(api_version) if isinstance(api_version, str) else None
        if version is None:
            finding = unsupported("apiVersion", api_version, list(API_VERSIONS), "config.api-version")
            self.emit([finding], prefix=prefix, document=document, locate=locate)
            return
        detection = choose(data, self.scheduler, self.release, self.named_by)
        chosen = detection.scheduler
        judged = chosen.reader_for(self.release)
        release, refused = reader_gates(judged.release)
        reader = Reader(release, chosen)
        if refused:  # judged at the reader's own minor, not the cluster's
            gate_findings = [
                Finding(
                    self.refused_gates, "", f"feature gates of {reader.label}: {p}", "feature-gates.reader"
                )
                for p in refused
            ]
            self.emit(gate_findings, prefix=prefix, document=document, locate=locate)
        reason = detection.reason
        if chosen.kubernetes_minor not in (None, release.minor):
            reason += (
                f"; it is built on Kubernetes 1.{chosen.kubernetes_minor}, outside limitguard's tables "
                f"({supported_text()}): the in-tree rules of {release.name}, the nearest, apply"
            )
        self.report.readers.append(
            ReaderChoice(
                prefix, chosen.name, chosen.spec, chosen.build_name, release.name, reason, detection.certain
            )
        )
        built_on = chosen.kubernetes_minor
        if not release.serves(version) and built_on is not None and built_on < API_REMOVED_IN[version]:
            findings = [served_but_unchecked(str(api_version), chosen.label, release, built_on)]
        elif not release.serves(version):
            findings = [not_served(str(api_version), version, reader)]
            findings += schemas.validate(schemas.config_validator(version), data)
        else:
            findings = validate_config(data, version, reader)
        self.emit(findings, prefix=prefix, document=document, locate=locate)

    def configmap(
        self,
        configmap: dict[str, Any],
        *,
        prefix: str,
        structural: str,
        document: int | None,
        outer: Document | None,
    ) -> None:
        data = configmap.get("data")
        if not isinstance(data, dict):
            return
        for key, value in data.items():
            if not isinstance(value, str) or KIND not in value:
                continue  # cheap: never parse values that cannot hold a configuration
            self.configmap_value(
                str(key), value, prefix=prefix, structural=structural, document=document, outer=outer
            )

    def configmap_value(
        self,
        key: str,
        value: str,
        *,
        prefix: str,
        structural: str,
        document: int | None,
        outer: Document | None,
    ) -> None:
        value_prefix = prefix_path(prefix, f"data[{key}]")
        value_structural = path_join(structural, "data", key)
        origin = outer.literal_blocks.get(value_structural) if outer else None

        def shift(position: tuple[int, int] | None) -> tuple[int, int] | None:
            if position is None or origin is None:
                return None
            return origin[0] + position[0] - 1, origin[1] + position[1]

        try:
            inner_documents = load_documents(value)
        except YamlInputError as exc:
            self.configs += 1
            where = f" at line {exc.line}, column {exc.column} of the value" if exc.line is not None else ""
            label = "YAML syntax error" if exc.rule == "yaml.syntax" else "YAML input rejected"
            text = f"{label}{where}: {exc.problem}"
            finding = Finding(
                "error", "", f"{HELM_HINT} ({text})" if has_helm_directives(value) else text, exc.rule
            )
            position = shift((exc.line, exc.column) if exc.line is not None else None)
            if position is None and outer is not None:
                position = outer.locate(value_structural)
            self.emit([finding], prefix=value_prefix, document=document, locate=lambda _p: position)
            return
        found_before = self.configs
        for inner in inner_documents:
            inner_prefix = (
                value_prefix if len(inner_documents) == 1 else f"{value_prefix}(document {inner.index})"
            )

            def locate(path: str, inner: Document = inner) -> tuple[int, int] | None:
                return shift(inner.locate(path))

            data = inner.data
            if isinstance(data, dict) and data.get("kind") == KIND:
                self.config(data, prefix=inner_prefix, document=document, locate=locate)
        if self.configs == found_before:
            self.emit(
                [info("", f"mentions {KIND} but holds no such document; skipped", "input.skipped")],
                prefix=value_prefix,
                document=document,
                locate=lambda _p: outer.locate(value_structural) if outer else None,
            )


def validate_text(
    text: str,
    source: str = "<input>",
    release: Release = DEFAULT_RELEASE,
    scheduler: str = AUTO,
    other_kinds: Mapping[str, KindCheck] | None = None,
) -> Report:
    """Validate any input form (bare config, ConfigMap, List, multi-document YAML, v1 fragment) for
    ``scheduler`` (``NAME[@VERSION]`` of ``schedulers``; auto detects it per configuration); a
    document of one of ``other_kinds`` is judged by its check instead."""
    report = Report(source)
    try:
        documents = load_documents(text)
    except YamlInputError as exc:
        message = f"{HELM_HINT} ({exc})" if has_helm_directives(text) else str(exc)
        report.add(Finding("error", "", message, exc.rule, line=exc.line, column=exc.column))
        return report
    if has_helm_directives(text):
        report.add(warning("", HELM_HINT, "input.helm-template"))
    validation = _Validation(report, release, scheduler, other_kinds=other_kinds)
    multi = len(documents) > 1
    for document in documents:
        validation.document(
            document.data,
            prefix="",
            structural="",
            document=document.index if multi else None,
            outer=document,
            allow_fragment=True,
        )
    if validation.configs == 0:
        report.add(
            Finding(
                "error",
                "",
                f"no {KIND} found in the input (checked {len(documents)} document(s))",
                "input.no-config",
            )
        )
    return report


SCHEDULER_ANNOTATION = "limitguard.io/scheduler"


def configmap_verdict(
    configmap: dict[str, Any], release: Release = DEFAULT_RELEASE, scheduler: str = AUTO
) -> Report | None:
    """Verdict for a ConfigMap from an AdmissionRequest: None when no data value mentions
    KubeSchedulerConfiguration (decided by a substring test, before any YAML parsing), else a Report whose
    paths start with ``data[<key>].``. The ConfigMap's ``limitguard.io/scheduler`` annotation
    (``NAME[@VERSION]``) names the scheduler that reads it and wins over ``scheduler`` (the server's
    default); a version limitguard has no table for is a warning, and that scheduler's newest release
    applies."""
    data = configmap.get("data") if isinstance(configmap, dict) else None
    if not isinstance(data, dict) or not any(isinstance(v, str) and KIND in v for v in data.values()):
        return None
    metadata = configmap.get("metadata") if isinstance(configmap.get("metadata"), dict) else {}
    name = metadata.get("name") if isinstance(metadata, dict) else None
    namespace = metadata.get("namespace") if isinstance(metadata, dict) else None
    source = f"configmap/{namespace}/{name}" if namespace else f"configmap/{name or '<unnamed>'}"
    report = Report(source)
    annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
    named = annotations.get(SCHEDULER_ANNOTATION) if isinstance(annotations, dict) else None
    named_by = "the webhook's schedulerConfigValidation.scheduler"
    if named is not None:
        path = f"metadata.annotations[{SCHEDULER_ANNOTATION}]"
        try:
            if not isinstance(named, str):
                raise SchedulerChoiceError("not a string")
            chosen, note = resolve_leniently(named)
        except SchedulerChoiceError:
            report.add(unsupported(path, named, list(CHOICES), "input.scheduler"))
            return report
        # a build newer than limitguard's tables must not block the write: its newest release applies
        scheduler = chosen.spec if chosen is not None else AUTO
        named_by = f"the {SCHEDULER_ANNOTATION} annotation"
        if note:
            report.add(warning(path, note, "input.scheduler-version"))
    _Validation(report, release, scheduler, named_by, refused_gates="warning").configmap(
        configmap, prefix="", structural="", document=None, outer=None
    )
    return report


__all__ = ["SCHEDULER_ANNOTATION", "configmap_verdict", "validate_config", "validate_text"]
