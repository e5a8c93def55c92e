"""NodeNUMAResourceArgs (Koordinator v1.8.0: apis/config/v1 SetDefaults_NodeNUMAResourceArgs,
apis/config/validation ValidateNodeNUMAResourceArgs and the scorer lookup of plugins/nodenumaresource
NewWithOptions).

Koordinator reports both strategies' weights under one path ``resources[i].weight``; findings name the
strategy the weight is in.
"""

from __future__ import annotations

import copy
from typing import Any

from limitguard.core.paths import path_join

from ...fields.findings import Finding, invalid
from ...tables.readers import Reader
from ..kind import ArgsKind
from .common import SCHEMA_DIR, drop_nulls, scoring_strategy_findings

#: The policies the validation accepts ("" keeps pods without a policy unbound); apis/extension also
#: names Default and ConstrainedBurst, which are pod-level policies only.
CPU_BIND_POLICIES = ("", "FullPCPUs", "SpreadByPCPUs")
DEFAULT_STRATEGY = {
    "type": "LeastAllocated",
    "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
}


def default(args: dict[str, Any], _path: str, _reader: Reader) -> list[Finding]:
    drop_nulls(args)
    args.setdefault("defaultCPUBindPolicy", "FullPCPUs")
    for name in ("scoringStrategy", "numaScoringStrategy"):
        drop_nulls(args.get(name))
        args.setdefault(name, copy.deepcopy(DEFAULT_STRATEGY))
    return []


def validate(args: dict[str, Any], path: str, _reader: Reader) -> list[Finding]:
    findings: list[Finding] = []
    policy = args.get("defaultCPUBindPolicy")
    if isinstance(policy, str) and policy not in CPU_BIND_POLICIES:
        findings.append(
            invalid(
                path_join(path, "defaultCPUBindPolicy"),
                policy,
                "must specified CPU bind policy FullPCPUs or SpreadByPCPUs",
                "koord.numa.cpu-bind-policy",
            )
        )
    findings += scoring_strategy_findings(
        args.get("scoringStrategy"), path_join(path, "scoringStrategy"), "scoring strategy"
    )
    findings += scoring_strategy_findings(
        args.get("numaScoringStrategy"), path_join(path, "numaScoringStrategy"), "numa scoring strategy"
    )
    return findings


ARGS = ArgsKind(
    "NodeNUMAResourceArgs", "NodeNUMAResource", validate, default, in_tree=False, schema_dir=SCHEMA_DIR
)
