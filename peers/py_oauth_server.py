"""A fastmcp server behind fastmcp's in-memory OAuth authorization server
(dynamic registration, PKCE S256, rotating refresh tokens), a peer for the
OAuth tests. Usage: py_oauth_server.py PORT [ACCESS_TOKEN_SECONDS]
(serves http://127.0.0.1:PORT/mcp)."""

import sys

from fastmcp import FastMCP
from fastmcp.server.auth.auth import ClientRegistrationOptions
from fastmcp.server.auth.providers import in_memory
from fastmcp.server.auth.providers.in_memory import InMemoryOAuthProvider

port = int(sys.argv[1])
if len(sys.argv) > 2:
    # Short-lived access tokens, so a test sees real expiry.
    in_memory.DEFAULT_ACCESS_TOKEN_EXPIRY_SECONDS = int(sys.argv[2])

provider = InMemoryOAuthProvider(
    base_url=f"http://127.0.0.1:{port}",
    client_registration_options=ClientRegistrationOptions(
        enabled=True, valid_scopes=["mcp:tools"], default_scopes=["mcp:tools"]
    ),
    required_scopes=["mcp:tools"],
)
server = FastMCP("py-oauth-peer", auth=provider)


@server.tool
def echo(message: str) -> str:
    """Echoes the message back."""
    return f"Echo: {message}"


if __name__ == "__main__":
    server.run(transport="http", host="127.0.0.1", port=port)
