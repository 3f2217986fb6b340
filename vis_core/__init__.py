"""Vis core: the engine behind the `vis` terminal app and `vis run` (never imports textual)."""

__version__ = "0.1.0"
