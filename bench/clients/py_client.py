"""The Python `mcp` client of `cargo xtask bench-compare` (`ClientSession`
over `stdio_client` or `streamable_http_client`). Same command line and
output as every client of the benchmark (see bench/README.md):

    python py_client.py <scenario> <n> <calls> (-- <server argv...> | --url <url>)
"""

import asyncio
import json
import sys
import time
from contextlib import AsyncExitStack

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

MESSAGE = "hello"


def vm_hwm_kb() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


async def connect(stack: AsyncExitStack, mode: str, target: list[str]) -> ClientSession:
    if mode == "--":
        params = StdioServerParameters(command=target[0], args=target[1:])
        with open("/dev/null", "w") as devnull:
            streams = await stack.enter_async_context(stdio_client(params, errlog=devnull))
    else:
        streams = await stack.enter_async_context(streamable_http_client(target[0]))
    read, write = streams[0], streams[1]
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return session


async def call(session: ClientSession) -> None:
    result = await session.call_tool("echo", {"message": MESSAGE})
    if getattr(result, "is_error", False):
        raise RuntimeError("echo reported an error")


async def burst(session: ClientSession, n: int, total: int) -> int:
    per_task = total // n

    async def loop() -> None:
        for _ in range(per_task):
            await call(session)

    await asyncio.gather(*(loop() for _ in range(n)))
    return per_task * n


async def main() -> dict:
    scenario, n, calls, mode, *target = sys.argv[1:]
    n, calls = int(n), int(calls)
    warmup = calls // 10 + 10
    async with AsyncExitStack() as stack:
        if scenario == "seq":
            session = await connect(stack, mode, target)
            for _ in range(warmup):
                await call(session)
            samples = []
            for _ in range(calls):
                started = time.perf_counter_ns()
                await call(session)
                samples.append(time.perf_counter_ns() - started)
            samples.sort()
            pick = lambda p: samples[round((len(samples) - 1) * p)]
            return {"p50_ns": pick(0.5), "p99_ns": pick(0.99)}
        if scenario == "tput":
            session = await connect(stack, mode, target)
            await burst(session, n, max(warmup, n))
            started = time.perf_counter()
            done = await burst(session, n, calls)
            return {"calls_per_s": done / (time.perf_counter() - started)}
        if scenario in ("catalog", "idle"):
            # Each session lives in its own task (anyio scopes must be left
            # in the task that entered them) until `release` is set.
            release = asyncio.Event()

            async def hold(ready: asyncio.Future) -> None:
                try:
                    async with AsyncExitStack() as own:
                        session = await connect(own, mode, target)
                        tools = len((await session.list_tools()).tools) if scenario == "catalog" else 0
                        ready.set_result(tools)
                        await release.wait()
                except BaseException as error:
                    if not ready.done():
                        ready.set_exception(error)
                    raise

            loop = asyncio.get_running_loop()
            started = time.perf_counter_ns()
            readies = [loop.create_future() for _ in range(n)]
            holders = [asyncio.create_task(hold(ready)) for ready in readies]
            tools = await asyncio.gather(*readies)
            wall = time.perf_counter_ns() - started
            if scenario == "idle":
                await asyncio.sleep(1)
                result = {"sessions": len(tools), "vm_hwm_kb": vm_hwm_kb()}
            else:
                result = {"wall_ns": wall, "tools": sum(tools)}
            release.set()
            await asyncio.gather(*holders)
            return result
        raise SystemExit(f"unknown scenario {scenario}")


if __name__ == "__main__":
    result = asyncio.run(main())
    result.setdefault("vm_hwm_kb", vm_hwm_kb())
    result["client"] = "py"
    print(json.dumps(result), flush=True)
