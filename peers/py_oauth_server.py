"""A fastmcp server behind fastmcp's in-memory OAuth authorization server
(dynamic registration, PKCE S256, rotating refresh tokens, RFC 7009
revocation), a peer for the OAuth tests.

Usage: py_oauth_server.py PORT [ACCESS_TOKEN_SECONDS]
(serves http://127.0.0.1:PORT/mcp).

GET /test/token-requests answers how many token requests (code exchanges
and refreshes) and revocations the authorization server has served, so a
test can count what a client spent."""

import sys

from fastmcp import FastMCP
from fastmcp.server.auth.auth import ClientRegistrationOptions, RevocationOptions
from fastmcp.server.auth.providers import in_memory
from fastmcp.server.auth.providers.in_memory import InMemoryOAuthProvider
from starlette.requests import Request
from starlette.responses import JSONResponse

port = int(sys.argv[1])
if len(sys.argv) > 2:
    # Short-lived access tokens, so a test sees real expiry.
    in_memory.DEFAULT_ACCESS_TOKEN_EXPIRY_SECONDS = int(sys.argv[2])

served = {"code": 0, "refresh": 0, "revoke": 0}


class CountingProvider(InMemoryOAuthProvider):
    async def exchange_authorization_code(self, *args, **kwargs):
        served["code"] += 1
        return await super().exchange_authorization_code(*args, **kwargs)

    async def exchange_refresh_token(self, *args, **kwargs):
        served["refresh"] += 1
        return await super().exchange_refresh_token(*args, **kwargs)

    async def revoke_token(self, *args, **kwargs):
        served["revoke"] += 1
        return await super().revoke_token(*args, **kwargs)


provider = CountingProvider(
    base_url=f"http://127.0.0.1:{port}",
    client_registration_options=ClientRegistrationOptions(
        enabled=True, valid_scopes=["mcp:tools"], default_scopes=["mcp:tools"]
    ),
    revocation_options=RevocationOptions(enabled=True),
    required_scopes=["mcp:tools"],
)
server = FastMCP("py-oauth-peer", auth=provider)


@server.tool
def echo(message: str) -> str:
    """Echoes the message back."""
    return f"Echo: {message}"


@server.custom_route("/test/token-requests", methods=["GET"])
async def token_requests(_: Request) -> JSONResponse:
    return JSONResponse(served)


if __name__ == "__main__":
    server.run(transport="http", host="127.0.0.1", port=port)
