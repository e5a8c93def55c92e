"""The policy report CRDs of tests/fixtures/policyreports (upstream, unchanged) and their schemas."""

from __future__ import annotations

from functools import cache
from typing import Any

import yaml
from jsonschema import Draft202012Validator

from limitguard.core.config import ReportsApi
from limitguard.core.reports.policyreport import REPORT_APIS
from tests.support import REPO

CRD_DIR = REPO / "tests" / "fixtures" / "policyreports"
CRD_FILES = {
    ReportsApi.OPENREPORTS: (
        "openreports.io_reports.v0.2.1.yaml",
        "openreports.io_clusterreports.v0.2.1.yaml",
    ),
    ReportsApi.WGPOLICYK8S: (
        "wgpolicyk8s.io_policyreports.v1alpha2.yaml",
        "wgpolicyk8s.io_clusterpolicyreports.v1alpha2.yaml",
    ),
}


@cache
def crd(file: str) -> dict[str, Any]:
    return yaml.safe_load((CRD_DIR / file).read_text())


def schema_validator(api: ReportsApi, namespaced: bool) -> Draft202012Validator:
    """The upstream CRD's OpenAPI schema of the version limitguard writes."""
    info = REPORT_APIS[api]
    document = crd(CRD_FILES[api][0 if namespaced else 1])
    (version,) = [v for v in document["spec"]["versions"] if v["name"] == info.version]
    return Draft202012Validator(version["schema"]["openAPIV3Schema"])
