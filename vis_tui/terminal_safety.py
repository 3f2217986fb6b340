"""Text in the app reaches the terminal as text: ESC and other control characters are shown.

Textual's ``Content`` and Rich's ``Text`` strip a few control codes (bell, backspace, CR …)
from the text they are given, but let ESC through, so model text, tool output, file names or
extension text could write the clipboard (OSC 52), retitle the window or clear the screen.
:func:`install` widens their tables once per process: every other C0/C1 control character is
replaced by its one-character visible picture (``␛`` for ESC), and so is every bidi control
(U+202E…) and character that draws as nothing (tag characters, zero-width spaces, as the CLI
shows them: :data:`vis_core.model.invisible.HIDDEN_IN_PROSE`), so spans keep their offsets.
"""

from __future__ import annotations

from collections.abc import Callable

from vis_core.model.invisible import HIDDEN_IN_PROSE, show_stray_selectors

KEPT = frozenset({0x09, 0x0A})  # tab and newline are layout, not control sequences
_PICTURES = {
    **{code: chr(0x2400 + code) for code in range(0x20)},
    0x7F: "\u2421",
    **{code: "\ufffd" for code in range(0x80, 0xA0)},
    # bidi controls: ``evil\u202etxt.exe`` would draw as ``evilexe.txt``; and ``rm`` with a
    # hidden `` -rf`` in tag characters as ``rm``: shown, as the CLI shows them, not applied
    **{code: "\ufffd" for code in HIDDEN_IN_PROSE},
}


def install() -> None:
    """Extend Textual's and Rich's control-code tables (what they already strip stays so),
    and their stripping to the variation selectors that select nothing, which a table cannot
    tell from those that do (:data:`vis_core.model.invisible.STRAY_SELECTOR`)."""
    import rich.control
    import rich.text
    import textual.content

    for table in (textual.content._CONTROL_STRIP_TRANSLATE, rich.control._CONTROL_STRIP_TRANSLATE):
        for code, picture in _PICTURES.items():
            if code not in KEPT and code not in table:
                table[code] = picture  # type: ignore[assignment]
    for module, name in (
        (textual.content, "_strip_control_codes"),
        (rich.text, "strip_control_codes"),
    ):
        names = vars(module)  # the name each module calls the function by
        names[name] = _showing_stray_selectors(names[name])


def _showing_stray_selectors(strip: Callable[[str], str]) -> Callable[[str], str]:
    """``strip``, then each stray variation selector shown as a picture (one character for
    one: spans keep their offsets); ``strip`` itself when it does so already."""
    if getattr(strip, "shows_stray_selectors", False):
        return strip

    def stripped(text: str) -> str:
        return show_stray_selectors(strip(text), _picture)

    stripped.shows_stray_selectors = True  # type: ignore[attr-defined]
    return stripped


def _picture(_selector: str) -> str:
    return "\ufffd"
