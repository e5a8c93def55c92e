"""A paced admission client in its own process: POSTs one body at a fixed rate until stopped.

Benchmarks of the server's event loop must not share that loop (or its process) with the load
generator. Reads the body from a file, sends --rate requests per second to --url until its stdin
closes, then prints the latencies (seconds) as a JSON list.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

import aiohttp
import orjson


async def run(url: str, body: bytes, rate: float) -> list[float]:
    latencies: list[float] = []
    stopped = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_reader(sys.stdin.fileno(), lambda: stopped.set() if not sys.stdin.buffer.read1(1) else None)

    async def one(session: aiohttp.ClientSession) -> None:
        started = time.perf_counter()
        async with session.post(url, data=body, headers={"Content-Type": "application/json"}) as response:
            await response.read()
        latencies.append(time.perf_counter() - started)

    async with aiohttp.ClientSession() as session:
        tasks: set[asyncio.Task[None]] = set()
        began = time.monotonic()
        sent = 0
        while not stopped.is_set():
            task = asyncio.create_task(one(session))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
            sent += 1
            await asyncio.sleep(max(0.0, began + sent / rate - time.monotonic()))
        await asyncio.gather(*tasks)
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--url", required=True)
    parser.add_argument("--body", required=True, help="file with the request body")
    parser.add_argument("--rate", type=float, default=200)
    args = parser.parse_args()
    with open(args.body, "rb") as stream:
        body = stream.read()
    print(orjson.dumps(asyncio.run(run(args.url, body, args.rate))).decode())


if __name__ == "__main__":
    main()
