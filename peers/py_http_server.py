"""A Python `mcp` 2.x server over streamable HTTP, a peer for the transport
tests. Usage: py_http_server.py PORT (serves http://127.0.0.1:PORT/mcp)."""

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
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
