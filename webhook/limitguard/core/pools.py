"""Node pools: a ratio map per group of nodes, chosen by label, so nodes a cluster autoscaler or
Karpenter creates take their pool's ratio without an annotation each.

A node's ratio map is, in this order: its valid annotation; else the first pool whose selector
matches its labels; else the cluster default. Levels are never merged. The choice is made when the
node's record is built (the node is read or changes), never per request.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from limitguard.core.fielderrors import FieldError, FieldErrors
from limitguard.core.labelselector import LabelSelector, parse_label_selector
from limitguard.core.memo import Memo, MiB
from limitguard.core.names import dns1123_label_problem
from limitguard.core.paths import path_join
from limitguard.core.ratios import RatioError, RatioMap, parse_ratio_map

MAX_NODE_POOLS = 64


@dataclass(frozen=True, slots=True)
class RatioSource:
    """Where a node's ratio map came from: `annotation`, `pool:<name>` or `default` (the metric label)."""

    label: str
    # How messages name it: worked out once, as every no-room warning and denial names it.
    text: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        pool = self.label.removeprefix("pool:") if self.label.startswith("pool:") else ""
        text = (
            f"pool {pool}" if pool else "node annotation" if self.label == "annotation" else "cluster default"
        )
        object.__setattr__(self, "text", text)

    def describe(self) -> str:
        """How messages name it: `node annotation`, `pool gpu`, `cluster default`."""
        return self.text


ANNOTATION = RatioSource("annotation")
DEFAULT = RatioSource("default")


@dataclass(frozen=True, slots=True)
class NodePool:
    name: str
    selector: LabelSelector
    ratios: RatioMap  # shared by every node of the pool: never modified
    source: RatioSource


def pool_of(labels: Mapping[str, str], pools: Sequence[NodePool]) -> NodePool | None:
    """The first pool whose selector matches *labels*."""
    for pool in pools:
        if pool.selector.matches(labels):
            return pool
    return None


_UNKNOWN: Any = object()  # a memo miss: None is a kept answer (no pool)


class PoolChooser:
    """pool_of, remembered by the values of the label keys the selectors name (all a match can
    depend on): nodes of one pool share those values, so a cluster's nodes cost one selector scan per
    distinct combination, not one per node event. The memo is bounded (selectors on a per-node label
    such as the hostname make every node distinct)."""

    MEMO_LIMIT = 4096

    def __init__(self, pools: Sequence[NodePool] = ()) -> None:
        self.pools = tuple(pools)
        self._keys = tuple(sorted({r.key for pool in self.pools for r in pool.selector.requirements}))
        # Policy: per values of the selectors' label keys, MEMO_LIMIT entries, 1 MiB, never cleared
        # (the pools are fixed for the chooser's life).
        self._memo: Memo[tuple[str | None, ...], NodePool | None] = Memo(
            "node-pools", entries=self.MEMO_LIMIT, max_bytes=1 * MiB
        )

    def __bool__(self) -> bool:
        return bool(self.pools)

    def __call__(self, labels: Mapping[str, str]) -> NodePool | None:
        get = labels.get
        key = tuple([get(name) for name in self._keys])
        found = self._memo.get(key, _UNKNOWN)
        if found is not _UNKNOWN:
            return found
        found = pool_of(labels, self.pools)
        self._memo.put(key, found)
        return found


def parse_node_pools(
    raw: Any, where: str = "limitAware.nodePools", errors: FieldErrors | None = None
) -> tuple[tuple[NodePool, ...], list[FieldError]]:
    """The configured pools in order, and every problem as `field.path: what is wrong`.

    A part *errors* already holds a problem for (the JSON Schema's) is not judged again, and its
    pool is not built; the other pools and parts are still checked (a duplicate name is found
    whatever else is wrong)."""
    if raw is None:
        return (), []
    if not isinstance(raw, list):
        return (), [FieldError(where, "must be a list of {name, nodeSelector, limitToAllocatableRatio}")]
    known = errors if errors is not None else FieldErrors()
    problems: list[FieldError] = []
    if len(raw) > MAX_NODE_POOLS:
        problems.append(FieldError(where, f"Too many: {len(raw)}: must have at most {MAX_NODE_POOLS} items"))
    pools: list[NodePool] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(raw):
        here = path_join(where, index)
        if not isinstance(item, Mapping):
            problems.append(
                FieldError(here, "must be an object with name, nodeSelector and limitToAllocatableRatio")
            )
            continue
        found: list[FieldError] = []
        name, name_path = item.get("name"), path_join(here, "name")
        if known.invalid(name_path):
            pass
        elif not isinstance(name, str) or not name:
            found.append(FieldError(name_path, "Required value"))
        elif (problem := dns1123_label_problem(name)) is not None:
            found.append(FieldError(name_path, f"Invalid value: {name!r}: {problem}"))
        elif name in seen:
            found.append(FieldError(name_path, f"Duplicate value: {name!r} (also {where}[{seen[name]}])"))
        else:
            seen[name] = index
        selector_path = path_join(here, "nodeSelector")
        selector = LabelSelector()
        if known.invalid(selector_path):
            pass
        elif "nodeSelector" not in item or item["nodeSelector"] is None:
            found.append(FieldError(selector_path, "Required value: use {} to select every node"))
        else:
            selector, selector_problems = parse_label_selector(item["nodeSelector"], selector_path)
            found += selector_problems
        ratios: RatioMap = {}
        ratios_path = path_join(here, "limitToAllocatableRatio")
        if known.invalid(ratios_path):
            pass
        elif "limitToAllocatableRatio" not in item:
            found.append(FieldError(ratios_path, "Required value"))
        else:
            try:
                ratios = parse_ratio_map(item["limitToAllocatableRatio"])
            except RatioError as error:
                found.append(FieldError(ratios_path, str(error)))
        problems += found
        if not found and not known.invalid(here):
            pools.append(NodePool(name, selector, ratios, RatioSource(f"pool:{name}")))
    return tuple(pools), problems
