"""A Python `mcp` 2.x server, a peer for the transport tests.

Usage: py_http_server.py PORT [streamable-http|sse]. Streamable HTTP (the
default) serves http://127.0.0.1:PORT/mcp; legacy SSE serves /sse."""

import sys

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("py-http-peer")


@server.tool()
def echo(message: str) -> str:
    """Echoes the message back."""
    return f"Echo: {message}"


@server.tool()
def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


@server.tool()
async def count(steps: int, ctx: Context) -> str:
    """Reports progress once per step, then answers."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps)
    return f"counted {steps}"


if __name__ == "__main__":
    transport = sys.argv[2] if len(sys.argv) > 2 else "streamable-http"
    server.run(transport, host="127.0.0.1", port=int(sys.argv[1]))
