"""``python -m vis_tui`` starts the terminal app like ``vis`` does."""

from __future__ import annotations

import sys

from vis_core.cli import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
