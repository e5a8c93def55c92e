"""Kubernetes name syntax: qualified names and resource names (as apimachinery validates them)."""

from __future__ import annotations

import re

_DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = re.compile(rf"^{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*$")
_QUALIFIED_NAME_PART = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_HUGEPAGES = re.compile(r"^hugepages-[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$")

#: Unprefixed names a pod or node resource may have (besides hugepages-<size>).
STANDARD_RESOURCE_NAMES = frozenset({"cpu", "memory", "ephemeral-storage", "pods", "storage"})

#: is_valid_resource_name as one ECMA-262 regular expression, for JSON Schemas (editors apply it); the
#: lookahead bounds the prefix to 253 characters, the repetition the name to 63.
RESOURCE_NAME_PATTERN = (
    r"^(?:cpu|memory|ephemeral-storage|pods|storage"
    r"|hugepages-[0-9]+(?:\.[0-9]+)?(?:Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?"
    r"|(?=[^/]{1,253}/)[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*"
    r"/[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)$"
)

RESOURCE_NAME_HINT = (
    "must be a standard resource name (cpu, memory, ephemeral-storage, pods, storage, hugepages-<size>) "
    'or a domain-prefixed name such as "nvidia.com/gpu"'
)


def is_qualified_name(name: object) -> bool:
    """Label-key syntax `[prefix/]name`: prefix a DNS-1123 subdomain (<= 253 chars), name <= 63
    chars of alphanumerics, `-`, `_`, `.`, alphanumeric at both ends."""
    if not isinstance(name, str) or not name:
        return False
    prefix, slash, local = name.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix)):
        return False
    return len(local) <= 63 and bool(_QUALIFIED_NAME_PART.match(local))


def is_label_value(value: object) -> bool:
    """A label value: empty, or at most 63 characters of alphanumerics, `-`, `_`, `.`, alphanumeric
    at both ends (apimachinery's IsValidLabelValue: the name part of a qualified name, or nothing)."""
    return isinstance(value, str) and (
        not value or (len(value) <= 63 and bool(_QUALIFIED_NAME_PART.match(value)))
    )


def is_valid_resource_name(name: object) -> bool:
    """A resource name as used in requests, limits and allocatable.

    Either a standard unprefixed name (cpu, memory, ..., `hugepages-<size>`) or `<prefix>/<name>`
    such as `nvidia.com/gpu`: Kubernetes requires non-standard resources to be fully qualified, so
    an unprefixed unknown name (`gpu`) is invalid.
    """
    if not isinstance(name, str) or not name:
        return False
    if "/" in name:
        prefix, _, local = name.partition("/")
        return "/" not in local and bool(prefix) and is_qualified_name(name)
    return name in STANDARD_RESOURCE_NAMES or bool(_HUGEPAGES.match(name))


_DNS1123_LABEL_FULL = re.compile(rf"^{_DNS1123_LABEL}$")
_DNS1035_LABEL_FULL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")


def dns1123_label_problem(name: str) -> str | None:
    """Why *name* is not an RFC 1123 DNS label (a Namespace name), or None when it is one."""
    if len(name) > 63:
        return "must be no more than 63 characters"
    if not _DNS1123_LABEL_FULL.match(name):
        return (
            "must be an RFC 1123 DNS label: lowercase letters, digits and '-', "
            "starting and ending with a letter or digit"
        )
    return None


def dns1035_label_problem(name: str) -> str | None:
    """Why *name* is not a valid Service name, or None when it is one.

    Kubernetes validates Service names as RFC 1035 labels: an RFC 1123 label that also starts
    with a letter (apimachinery's NameIsDNS1035Label).
    """
    problem = dns1123_label_problem(name)
    if problem is not None:
        return problem
    if not name[0].isalpha():
        return "must start with a lowercase letter (a Service name is an RFC 1035 DNS label)"
    return None
