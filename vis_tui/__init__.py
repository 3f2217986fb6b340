"""The Textual app of Vis."""

from vis_tui.terminal_safety import install as _install_terminal_safety

_install_terminal_safety()
