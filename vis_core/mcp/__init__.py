"""MCP servers: ``mcp.json`` (user + project), stdio and streamable HTTP, exposure, resources."""

from __future__ import annotations
