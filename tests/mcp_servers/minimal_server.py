"""The smallest MCP server over stdio, without the SDK (whose import is ~1.2 s of CPU a
process): it answers ``initialize`` and lists one tool, ``echo``, which answers. For tests of
how Vis finds, starts and calls a server, not of what the server serves (``server_app.py``
does that). It says where it starts on stderr, as ``server_app.py`` does."""

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
        schema = {"type": "object", "properties": {"text": {"type": "string"}}}
        result = {
            "tools": [{"name": "echo", "description": "Echo the text back.", "inputSchema": schema}]
        }
    elif method == "tools/call":
        text = message["params"].get("arguments", {}).get("text", "")
        result = {"content": [{"type": "text", "text": text}]}
    else:
        result = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}) + "\n")
    sys.stdout.flush()
