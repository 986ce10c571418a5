"""A scenario driver on the Python `mcp` 2.3 client (`mcp.Client`), for testing
a server (the gateway) with a client no one here wrote. Run it with the venv
`cargo xtask peers` installs:

    .peers/venv/bin/python py_client.py [--legacy] [--steps a,b,...] stdio <command> [args...]
    .peers/venv/bin/python py_client.py [--legacy] [--steps a,b,...] http http://127.0.0.1:PORT/mcp

Without `--legacy` the client connects with `mode="auto"` (the SDK's default:
a `server/discover` probe, per-request `_meta` after it) and the `connect`
step fails unless 2026-07-28 was negotiated. (The SDK's version pin,
`mode="2026-07-28"`, adopts a synthesized discover result without asking
the server, so it would never send `server/discover`.) `--legacy` is
`mode="legacy"`: the 2025-11-25 `initialize` handshake.

One JSON object per step on stdout, `{"step", "ok", "detail"}`: `connect`,
then the fixed scenario (`list`, `call`, `read`, `prompt`, `elicit`,
`list_changed`, `cancel`; `--steps` runs a subset). Exit 0 only if every
step passed. The server's stderr (stdio) is passed through to ours.

The names the steps use are in NAMES below; `MCP_DRIVER_NAMES` (a JSON
object with some of its keys) overrides them.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from typing import Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.subscriptions import ToolsListChanged

NAMES: dict[str, Any] = {
    # list: tools/list must include this tool
    "listedTool": "test_simple_text",
    # call: must answer a text block (also the call made after the cancel)
    "textTool": "test_simple_text",
    "textArgs": {},
    # read: resources/read, must answer text contents
    "resource": "test://static-text",
    # prompt: prompts/get, must answer messages
    "prompt": "test_simple_prompt",
    "promptArgs": {},
    # elicit: the tool asks for input (elicitation/create, or an input_required
    # result at 2026-07-28); the driver accepts with content that fits the
    # requested schema; the result text must match `elicitAccepted`
    "elicitTool": "test_elicitation",
    "elicitArgs": {"message": "Please answer the driver"},
    "elicitAccepted": "action=accept|confirmed: true",
    # list_changed: calling toggleTool adds or removes toggledTool and sends
    # tools/list_changed; called a second time to restore the state
    "toggleTool": "toggle",
    "toggledTool": "extra",
    # cancel: a call that takes longer than the cancel window
    "slowTool": "slow",
    "slowArgs": {"ms": 10000},
}
NAMES.update(json.loads(os.environ.get("MCP_DRIVER_NAMES", "{}")))

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
STEPS = ["list", "call", "read", "prompt", "elicit", "list_changed", "cancel"]
STEP_TIMEOUT_S = 20
NOTIFY_WINDOW_S = 5
CANCEL_AFTER_S = 0.3
CANCEL_DEADLINE_S = 2

failed = False


def emit(step: str, ok: bool, detail: Any) -> None:
    global failed
    if not ok:
        failed = True
    print(json.dumps({"step": step, "ok": ok, "detail": detail}, default=str), flush=True)


def usage() -> None:
    print(
        "usage: py_client.py [--legacy] [--steps a,b,...] (stdio <command> [args...] | http <url>)",
        file=sys.stderr,
    )
    raise SystemExit(2)


def parse(argv: list[str]) -> tuple[bool, list[str], str, list[str]]:
    """Leading flags, then the transport; `http <url>` may also take the flags after the URL."""
    legacy, steps = False, STEPS

    def flags(args: list[str]) -> None:
        nonlocal legacy, steps
        while args:
            if args[0] == "--legacy":
                legacy = True
                args.pop(0)
            elif args[0] == "--steps" and len(args) > 1:
                steps = [s for s in args[1].split(",") if s]
                if any(s not in STEPS for s in steps):
                    usage()
                del args[:2]
            else:
                return

    args = list(argv)
    flags(args)
    if len(args) < 2 or args[0] not in ("stdio", "http"):
        usage()
    mode, target = args[0], args[1:]
    if mode == "http":
        rest = target[1:]
        flags(rest)
        if rest:
            usage()
        target = target[:1]
    return legacy, steps, mode, target


def exit_now() -> None:
    """Leaves at once, ending our child processes first (a server that never
    answered, or one the client failed to close, may still run)."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as stat:
                ppid = int(stat.read().rsplit(")", 1)[1].split()[1])
            if ppid == os.getpid():
                os.kill(int(pid), 9)
        except (OSError, ValueError, IndexError):
            pass
    sys.stdout.flush()
    os._exit(1 if failed else 0)


def describe(error: BaseException) -> str:
    if isinstance(error, BaseExceptionGroup):
        return "; ".join(describe(e) for e in error.exceptions)
    return f"{type(error).__name__}: {error}"


def texts(result: Any) -> list[str]:
    return [block.text for block in (result.content or []) if getattr(block, "type", None) == "text"]


def fill(schema: dict[str, Any]) -> dict[str, Any]:
    """Content that fits a requested elicitation schema: each property gets its default, else a value of its type."""
    content: dict[str, Any] = {}
    for key, prop in (schema.get("properties") or {}).items():
        if "default" in prop:
            content[key] = prop["default"]
        elif "enum" in prop:
            content[key] = prop["enum"][0]
        elif "oneOf" in prop:
            content[key] = prop["oneOf"][0].get("const")
        elif prop.get("type") == "boolean":
            content[key] = True
        elif prop.get("type") in ("integer", "number"):
            content[key] = prop.get("minimum", 1)
        elif prop.get("type") == "array":
            items = prop.get("items") or {}
            first = (items.get("enum") or [None])[0] or ((items.get("anyOf") or [{}])[0].get("const"))
            content[key] = [first or "driver"]
        else:
            content[key] = "driver answer"
    return content


class Driver:
    def __init__(self, legacy: bool, mode: str, target: list[str]) -> None:
        self.legacy = legacy
        self.elicitations: list[dict[str, Any]] = []
        self.tools_changed = 0
        self.changed = anyio.Event()
        server: StdioServerParameters | str = (
            StdioServerParameters(command=target[0], args=target[1:]) if mode == "stdio" else target[0]
        )
        self.client = Client(
            server,
            mode="legacy" if legacy else "auto",
            elicitation_callback=self.on_elicit,
            message_handler=self.on_message,
            client_info=types.Implementation(name="py-sdk-driver", version="2.3.0"),
        )

    async def on_elicit(self, _context: Any, params: Any) -> types.ElicitResult:
        content = fill(dict(getattr(params, "requested_schema", None) or {}))
        self.elicitations.append({"message": params.message, "content": content})
        return types.ElicitResult(action="accept", content=content)

    def saw_tools_changed(self) -> None:
        self.tools_changed += 1
        self.changed.set()

    async def on_message(self, message: Any) -> None:
        # 2025-11-25: unsolicited notifications. At 2026-07-28 the listen
        # stream's events are read from the subscription (and tee here too).
        if self.legacy and isinstance(message, types.ToolListChangedNotification):
            self.saw_tools_changed()

    async def tool_names(self) -> list[str]:
        return [tool.name for tool in (await self.client.list_tools(cache_mode="refresh")).tools]

    async def step_list(self) -> tuple[bool, Any]:
        names = await self.tool_names()
        return NAMES["listedTool"] in names, {"tools": names}

    async def step_call(self) -> tuple[bool, Any]:
        result = await self.client.call_tool(NAMES["textTool"], NAMES["textArgs"])
        text = texts(result)
        return (not result.is_error and len(text) > 0), {"text": text, "isError": bool(result.is_error)}

    async def step_read(self) -> tuple[bool, Any]:
        result = await self.client.read_resource(NAMES["resource"], cache_mode="refresh")
        text = [c.text for c in result.contents if isinstance(getattr(c, "text", None), str)]
        return len(text) > 0, {"text": text}

    async def step_prompt(self) -> tuple[bool, Any]:
        result = await self.client.get_prompt(NAMES["prompt"], NAMES["promptArgs"])
        messages = result.messages or []
        first = messages[0].content.model_dump(mode="json", exclude_none=True) if messages else None
        return len(messages) > 0, {"messages": len(messages), "first": first}

    async def step_elicit(self) -> tuple[bool, Any]:
        before = len(self.elicitations)
        result = await self.client.call_tool(NAMES["elicitTool"], NAMES["elicitArgs"])
        text = texts(result)
        asked = self.elicitations[before:]
        accepted = not result.is_error and any(re.search(NAMES["elicitAccepted"], t) for t in text)
        return bool(asked) and accepted, {"asked": asked, "text": text}

    async def wait_changed(self, seen: int) -> bool:
        with anyio.move_on_after(NOTIFY_WINDOW_S):
            while self.tools_changed <= seen:
                self.changed = anyio.Event()
                if self.tools_changed > seen:
                    break
                await self.changed.wait()
        return self.tools_changed > seen

    async def toggle_twice(self, honored: Any) -> tuple[bool, Any]:
        before = await self.tool_names()
        seen = self.tools_changed
        started = time.monotonic()
        answer = texts(await self.client.call_tool(NAMES["toggleTool"], {}))
        notified = await self.wait_changed(seen)
        latency = round((time.monotonic() - started) * 1000) if notified else None
        after = await self.tool_names()
        flipped = (NAMES["toggledTool"] in before) != (NAMES["toggledTool"] in after)
        # Put the server back as it was.
        seen = self.tools_changed
        await self.client.call_tool(NAMES["toggleTool"], {})
        restored = await self.wait_changed(seen)
        detail = {
            "honoredFilter": honored,
            "toggle": answer,
            "notified": notified,
            "latency_ms": latency,
            "had": NAMES["toggledTool"] in before,
            "has": NAMES["toggledTool"] in after,
            "restore_notified": restored,
        }
        return notified and flipped, detail

    async def step_list_changed(self) -> tuple[bool, Any]:
        if self.legacy:
            return await self.toggle_twice(None)
        # 2026-07-28: list changes come only on a `subscriptions/listen` stream.
        async with self.client.listen(tools_list_changed=True) as subscription:
            async with anyio.create_task_group() as group:

                async def read() -> None:
                    async for event in subscription:
                        if isinstance(event, ToolsListChanged):
                            self.saw_tools_changed()

                group.start_soon(read)
                honored = subscription.honored.model_dump(by_alias=True, exclude_none=True)
                outcome = await self.toggle_twice(honored)
                group.cancel_scope.cancel()
            return outcome

    async def step_cancel(self) -> tuple[bool, Any]:
        scope = anyio.CancelScope()
        outcome: dict[str, Any] = {}
        ended = anyio.Event()

        async def call() -> None:
            try:
                with scope:
                    outcome["result"] = texts(await self.client.call_tool(NAMES["slowTool"], NAMES["slowArgs"]))
            except Exception as error:
                outcome["error"] = describe(error)
            finally:
                outcome["ended"] = time.monotonic()
                ended.set()

        async with anyio.create_task_group() as group:
            started = time.monotonic()
            group.start_soon(call)
            with anyio.move_on_after(CANCEL_AFTER_S):
                await ended.wait()
            if ended.is_set():
                return False, {"ended_before_cancel": outcome, "after_ms": round((time.monotonic() - started) * 1000)}
            cancelled_at = time.monotonic()
            scope.cancel()
            with anyio.move_on_after(CANCEL_DEADLINE_S + 1):
                await ended.wait()
            if not ended.is_set():
                group.cancel_scope.cancel()
                return False, {"outcome": "the call did not end after the cancel"}
        ended_ms = round((outcome["ended"] - cancelled_at) * 1000)
        cancelled = scope.cancel_called and "result" not in outcome and "error" not in outcome
        # The connection must still work after the cancel.
        try:
            with anyio.fail_after(5):
                after: Any = texts(await self.client.call_tool(NAMES["textTool"], NAMES["textArgs"]))
        except Exception as error:
            after = describe(error)
        ok = cancelled and ended_ms <= CANCEL_DEADLINE_S * 1000 and isinstance(after, list) and len(after) > 0
        return ok, {
            "outcome": "cancelled" if cancelled else outcome,
            "ended_ms_after_cancel": ended_ms,
            "call_after_cancel": after,
        }


async def main() -> None:
    legacy, steps, mode, target = parse(sys.argv[1:])
    driver = Driver(legacy, mode, target)
    connected = anyio.Event()
    done = anyio.Event()

    async def watchdog() -> None:
        # The connect and the close run in the client's own task scopes, so
        # their deadlines are kept from outside: the process ends instead.
        with anyio.move_on_after(STEP_TIMEOUT_S):
            await connected.wait()
        if not connected.is_set():
            emit("connect", False, f"no connection within {STEP_TIMEOUT_S} s")
            for step in steps:
                emit(step, False, "not run: no connection")
            exit_now()
        await done.wait()
        await anyio.sleep(5)
        exit_now()

    async with anyio.create_task_group() as group:
        group.start_soon(watchdog)
        try:
            async with driver.client:
                connected.set()
                version = driver.client.protocol_version
                wanted = LEGACY if legacy else MODERN
                info = driver.client.server_info
                server = info.model_dump(exclude_none=True) if info else None
                emit("connect", version == wanted, {"protocolVersion": version, "wanted": wanted, "server": server})
                for step in steps:
                    try:
                        with anyio.fail_after(STEP_TIMEOUT_S):
                            ok, detail = await getattr(driver, f"step_{step}")()
                        emit(step, ok, detail)
                    except Exception as error:
                        emit(step, False, describe(error))
                done.set()
        except Exception as error:
            if not connected.is_set():
                emit("connect", False, describe(error))
                for step in steps:
                    emit(step, False, "not run: no connection")
        group.cancel_scope.cancel()


if __name__ == "__main__":
    try:
        anyio.run(main)
    except BaseException as error:  # noqa: BLE001 - the exit code is the contract
        if isinstance(error, SystemExit):
            raise
        emit("driver", False, describe(error))
    exit_now()
