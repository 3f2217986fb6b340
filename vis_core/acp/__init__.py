"""``vis acp``: Vis as an Agent Client Protocol agent over stdio (editors drive it)."""
