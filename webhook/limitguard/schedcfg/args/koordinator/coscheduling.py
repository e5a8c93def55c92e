"""CoschedulingArgs of Koordinator (v1.8.0: apis/config/v1 SetDefaults_CoschedulingArgs,
apis/config/validation ValidateCoschedulingArgs, called by plugins/coscheduling New).

Not the scheduler-plugins kind of the same name: durations instead of seconds, and no queue sort (since
Koordinator PR #2417 the gang order comes from koord-scheduler's NextPod hook).
"""

from __future__ import annotations

import json
from typing import Any

from limitguard.core.paths import path_join

from ...fields.findings import Finding, invalid, warning
from ...tables.readers import Reader
from ..kind import ArgsKind
from .common import SCHEMA_DIR, as_go_int, drop_nulls, duration_seconds, koord_scheduler

DEFAULTS: dict[str, Any] = {
    "defaultTimeout": "10m0s",
    "controllerWorkers": 1,
    "enablePreemption": False,
    "awareNetworkTopology": False,
    "defaultMatchPolicy": "once-satisfied",
}
#: apis/extension coscheduling.go GangMatchPolicy values; gang.go's isGangValidForPermit treats any
#: other value like once-satisfied.
MATCH_POLICIES = ("only-waiting", "waiting-and-running", "once-satisfied")


def default(args: dict[str, Any], _path: str, _reader: Reader) -> list[Finding]:
    drop_nulls(args)
    for name, value in DEFAULTS.items():
        args.setdefault(name, value)
    return []


def validate(args: dict[str, Any], path: str, reader: Reader) -> list[Finding]:
    findings: list[Finding] = []
    timeout = duration_seconds(args.get("defaultTimeout"))
    if timeout is not None and timeout < 0:
        findings.append(
            invalid(
                path_join(path, "defaultTimeout"),
                args["defaultTimeout"],
                "coeSchedulingArgs DefaultTimeoutSeconds invalid",
                "koord.coscheduling.timeout",
            )
        )
    workers = as_go_int(args.get("controllerWorkers"))
    if workers is not None and workers < 1:
        findings.append(
            invalid(
                path_join(path, "controllerWorkers"),
                workers,
                "coeSchedulingArgs ControllerWorkers invalid",
                "koord.coscheduling.workers",
            )
        )
    policy = args.get("defaultMatchPolicy")
    if isinstance(policy, str) and policy not in MATCH_POLICIES:
        listed = ", ".join(json.dumps(p) for p in MATCH_POLICIES)
        findings.append(
            warning(
                path_join(path, "defaultMatchPolicy"),
                f"{json.dumps(policy)} is none of {listed}: {koord_scheduler(reader)} starts, and gangs "
                "without their own match-policy annotation behave as once-satisfied",
                "koord.coscheduling.match-policy",
                policy,
            )
        )
    return findings


ARGS = ArgsKind("CoschedulingArgs", "Coscheduling", validate, default, in_tree=False, schema_dir=SCHEMA_DIR)
