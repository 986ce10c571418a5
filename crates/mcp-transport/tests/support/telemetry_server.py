"""The MCP server tests/telemetry.rs runs over stdio: the same answers as the
test's HTTP script gives (see `answer` there), at either wire generation
(argv[1] is "modern" or "legacy"), and every request line it reads appended
to the file argv[2]."""
import json
import sys

MODERN = sys.argv[1] == "modern"
LOG = sys.argv[2]
CAPABILITIES = {"tools": {}, "prompts": {}, "resources": {}}
INFO = {"name": "telemetry-server", "version": "1.0.0"}


def result(message):
    method = message.get("method")
    params = message.get("params") or {}
    if method == "server/discover":
        if not MODERN:
            return None, (-32601, "method not found")
        return {
            "supportedVersions": ["2026-07-28"],
            "capabilities": CAPABILITIES,
            "_meta": {"io.modelcontextprotocol/serverInfo": INFO},
        }, None
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion"),
            "capabilities": CAPABILITIES,
            "serverInfo": INFO,
        }, None
    if method == "tools/list":
        schema = {"type": "object"}
        return {"tools": [{"name": "echo", "inputSchema": schema},
                          {"name": "fail", "inputSchema": schema}]}, None
    if method == "tools/call":
        name = params.get("name")
        if name == "echo":
            return {"content": [{"type": "text", "text": "echoed"}]}, None
        if name == "fail":
            return {"content": [{"type": "text", "text": "no"}], "isError": True}, None
        return None, (-32602, "unknown tool")
    if method == "prompts/get":
        return {"messages": []}, None
    if method == "resources/read":
        return {"contents": []}, None
    if method == "ping":
        return {}, None
    return None, (-32601, "method not found")


for line in sys.stdin:
    message = json.loads(line)
    with open(LOG, "a") as log:
        log.write(line.strip() + "\n")
    if "id" not in message or "method" not in message:
        continue
    ok, error = result(message)
    if error is None:
        answer = {"jsonrpc": "2.0", "id": message["id"], "result": ok}
    else:
        answer = {"jsonrpc": "2.0", "id": message["id"],
                  "error": {"code": error[0], "message": error[1]}}
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
