"""A small MCP server on Python `mcp` 2.3 for the peer tests.

It speaks 2026-07-28 (server/discover, per-request _meta, subscriptions/listen,
input_required results) to a client that asks for it and the 2025 handshake to
older clients, as the SDK serves both.

    python py_modern_server.py stdio
    python py_modern_server.py http PORT   streamable HTTP on 127.0.0.1:PORT/mcp

Tools:
    echo {text}  returns `text`
    toggle       adds the tool `extra` when it is absent, removes it when
                 present, and tells the client the tool list changed
    extra        present only while toggled on; returns "extra"
    confirm      asks the client for {confirm: boolean}: an input_required
                 result at 2026-07-28, an elicitation/create request before;
                 returns "confirmed: true|false" or "declined"
    slow {ms}    waits `ms` (default 200) and returns "done" (this SDK has no
                 tasks extension on the server side, so it is never a task)
"""

import sys

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import (
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
)
from pydantic import BaseModel

MODERN = "2026-07-28"

server = MCPServer("py-modern-peer", version="2.3.0")


class Confirmation(BaseModel):
    confirm: bool


def answer(action: str, content: dict | None) -> str:
    if action != "accept":
        return "declined"
    confirmed = bool(content and content.get("confirm") is True)
    return f"confirmed: {str(confirmed).lower()}"


@server.tool()
def echo(text: str) -> str:
    """Returns its text."""
    return text


def extra() -> str:
    """Listed while toggled on."""
    return "extra"


@server.tool()
async def toggle(ctx: Context) -> str:
    """Adds or removes the tool `extra`."""
    names = {tool.name for tool in await server.list_tools()}
    if "extra" in names:
        server.remove_tool("extra")
        state = "removed"
    else:
        server.add_tool(extra, name="extra")
        state = "added"
    if ctx.protocol_version == MODERN:
        # Delivered on the client's subscriptions/listen stream.
        await ctx.notify_tools_changed()
    else:
        await ctx.session.send_tool_list_changed()
    return state


@server.tool()
async def confirm(ctx: Context) -> str | InputRequiredResult:
    """Asks the user to confirm."""
    if ctx.protocol_version == MODERN:
        response = (ctx.input_responses or {}).get("confirm")
        if isinstance(response, ElicitResult):
            return answer(response.action, response.content)
        if isinstance(response, dict) and "action" in response:
            return answer(response["action"], response.get("content"))
        return InputRequiredResult(
            input_requests={
                "confirm": ElicitRequest(
                    params=ElicitRequestFormParams(
                        message="Confirm?",
                        requested_schema={
                            "type": "object",
                            "properties": {"confirm": {"type": "boolean", "description": "Go ahead?"}},
                            "required": ["confirm"],
                        },
                    )
                )
            }
        )
    result = await ctx.elicit("Confirm?", Confirmation)
    if result.action != "accept":
        return "declined"
    return f"confirmed: {str(result.data.confirm).lower()}"


@server.tool()
async def slow(ms: int = 200) -> str:
    """Waits, then answers."""
    await anyio.sleep(ms / 1000)
    return "done"


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "stdio":
        server.run("stdio")
    elif mode == "http" and len(sys.argv) > 2:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        sys.exit("usage: py_modern_server.py stdio | http PORT")


if __name__ == "__main__":
    main()
