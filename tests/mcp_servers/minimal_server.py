"""The smallest MCP server over stdio: it answers ``initialize`` and lists one tool, without
the SDK (whose import is ~1.2 s of CPU a process). For tests of how Vis finds and starts a
server's command, not of what the server serves (``server_app.py`` does that)."""

from __future__ import annotations

import json
import os
import sys

print(f"fixture server starting in {os.getcwd()}", file=sys.stderr, flush=True)
for line in sys.stdin:
    message = json.loads(line)
    ident, method = message.get("id"), message.get("method")
    if ident is None:
        continue  # a notification
    if method == "initialize":
        result = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "minimal", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
    else:
        result = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}) + "\n")
    sys.stdout.flush()
