"""``vis acp``: Vis as an Agent Client Protocol agent over stdio (editors drive it)."""

from vis_core.acp.protocol_import import import_protocol

import_protocol()  # before any module of this package imports acp
