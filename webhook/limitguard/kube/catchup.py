"""A new leader's catch-up: its pod cache must be at least as new as the Lease write that made it leader.

The previous leader approved bindings that are only in its own ledger; once persisted they show up
as pods bound in the watch. The write that gave us the lease has resourceVersion R, and every
binding persisted before it has a smaller one (etcd revisions are one cluster-wide counter), so a
pod cache that has applied everything up to R shows them all. The watch gets there by itself when
pods change or a bookmark arrives; if it has not after *relist_after* seconds, a fresh list (a
consistent read, newer than R by construction) settles it. Waiting long for the watch does not pay:
with no leader deciding, the bindings that would move the pod watch are the ones being refused, and
bookmarks come about once a minute; a relist keeps the replica ready and deciding elsewhere, so
WATCH_WAIT_SECONDS is short.

resourceVersions are compared as integers here: they are etcd revisions. When one is not an
integer (an apiserver that does not use etcd revisions), only the relist path is trusted.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from limitguard.kube.reflector import Reflector

WATCH_WAIT_SECONDS = 2.0  # how long a new leader waits for the pod watch before relisting pods


def _at_least(version: str, target: int) -> bool:
    return version.isdigit() and int(version) >= target


async def pods_caught_up(
    reflector: Reflector, target: str, *, sleep: Callable[[float], Awaitable[None]], relist_after: float
) -> str:
    """Return once the pods reflector has applied *target*; says how ("watch" or "relist")."""
    relisted = False
    lists_at_request = 0

    async def relist_later(delay: float) -> None:
        nonlocal relisted, lists_at_request
        await sleep(delay)
        relisted, lists_at_request = True, reflector.lists_completed
        reflector.request_relist()

    if target.isdigit():
        goal = int(target)
        timer = asyncio.create_task(relist_later(relist_after))

        def done() -> bool:
            return _at_least(reflector.resource_version, goal)  # a list newer than R passes too
    else:
        timer = asyncio.create_task(relist_later(0.0))

        def done() -> bool:
            return relisted and reflector.lists_completed > lists_at_request

    try:
        while not done():
            reflector.progressed.clear()
            waiter = asyncio.ensure_future(reflector.progressed.wait())
            watched = {waiter} if timer.done() else {waiter, timer}  # a fired timer would spin
            await asyncio.wait(watched, return_when=asyncio.FIRST_COMPLETED)
            waiter.cancel()
    finally:
        timer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await timer
    return "relist" if relisted else "watch"
