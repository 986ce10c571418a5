"""A Python `mcp` 1.x server over its native WebSocket transport (subprotocol
`mcp`), a peer for the transport tests. Usage: py_ws_server.py PORT (serves
ws://127.0.0.1:PORT/ws)."""

import sys
import warnings

import uvicorn
from mcp.server.fastmcp import Context, FastMCP

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from mcp.server.websocket import websocket_server

mcp = FastMCP("py-ws-peer")


@mcp.tool()
def echo(message: str) -> str:
    """Echoes the message back."""
    return f"Echo: {message}"


@mcp.tool()
async def count(steps: int, ctx: Context) -> str:
    """Reports progress once per step, then answers."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps)
    return f"counted {steps}"


@mcp.tool()
async def roots(ctx: Context) -> str:
    """Asks the client for its roots (a server-to-client request)."""
    result = await ctx.session.list_roots()
    return ",".join(str(root.uri) for root in result.roots)


async def app(scope, receive, send):
    if scope["type"] == "websocket" and scope["path"] == "/ws":
        server = mcp._mcp_server
        async with websocket_server(scope, receive, send) as (read, write):
            await server.run(read, write, server.create_initialization_options())
    elif scope["type"] == "http":
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b""})


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), lifespan="off", log_level="warning")
