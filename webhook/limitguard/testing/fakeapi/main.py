"""The fake apiserver as a process: a synthetic cluster, then the port on stdout.

python -m limitguard.testing.fakeapiserver --nodes N --pods M
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib

from limitguard.testing import fakeapi
from limitguard.testing.builders import make_namespace, make_node, make_pod
from limitguard.testing.fakeapi.server import FakeApiServer

ROOM_RATIO = '{"cpu": 100}'  # room-NNN nodes: limits up to their allocatable cpu (8), so 8 pods of 1 cpu


def populate(
    server: FakeApiServer,
    nodes: int,
    pods: int,
    namespaces: int = 50,
    room_nodes: int = 0,
    room_pods: int = 0,
) -> None:
    """A synthetic cluster: pods spread round-robin over nodes and namespaces, all Running; then
    *room_nodes* empty nodes `room-NNN` with room for 8 pods of 1 cpu each, and for each of them
    *room_pods* pending pods `ns-0/wave-NNN-MM` (1 cpu) to bind there in bursts."""
    for index in range(namespaces):
        server.apply("namespaces", make_namespace(f"ns-{index}"))
    for index in range(nodes):
        server.apply("nodes", make_node(f"node-{index:05d}"))
    for index in range(pods):
        server.apply(
            "pods",
            make_pod(
                f"ns-{index % namespaces}",
                f"app-{index:06d}",
                node=f"node-{index % nodes:05d}",
                cpu_limit="250m",
            ),
        )
    for wave in range(room_nodes):
        server.apply(
            "nodes",
            make_node(
                f"room-{wave:03d}", annotations={"node.koordinator.sh/limit-to-allocatable": ROOM_RATIO}
            ),
        )
        for index in range(room_pods):
            server.apply("pods", make_pod("ns-0", f"wave-{wave:03d}-{index:02d}", phase="Pending"))
    server.compact()  # the bulk load is not history anyone will watch from


async def _serve(args: argparse.Namespace) -> None:
    server = FakeApiServer(token=args.token, bookmark_interval=args.bookmark_interval)
    populate(server, args.nodes, args.pods, room_nodes=args.room_nodes, room_pods=args.room_pods)
    await server.start("127.0.0.1", args.port)
    print(server.port, flush=True)
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.Event().wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=(fakeapi.__doc__ or "").splitlines()[0])
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("--pods", type=int, default=10)
    parser.add_argument("--room-nodes", type=int, default=0, help="empty nodes with room for 8 pods")
    parser.add_argument("--room-pods", type=int, default=0, help="pending 1-cpu pods per room node")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--token", default=None)
    parser.add_argument("--bookmark-interval", type=float, default=60.0)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(parser.parse_args()))


if __name__ == "__main__":
    main()
