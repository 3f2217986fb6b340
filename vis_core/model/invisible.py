"""Characters that draw as nothing: which ones, and which of them prose may keep.

A name or a line can hide text in them: ``setup\\u200c.py`` draws as ``setup.py`` beside the
real one, tag characters (U+E0020…U+E007E) spell ASCII no one sees (``rm`` and a hidden
`` -rf``), and a bidi control makes ``evil\\u202etxt.exe`` read as another name. The CLI
(:mod:`vis_core.terminal`, :mod:`vis_core.model.lines`) and the app (``vis_tui``) build
their tables from these sets, so both show the same characters.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

# Bidi controls: embeddings, overrides and isolates, the marks, the Arabic letter mark.
BIDI = frozenset((*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C))

# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt): soft hyphen, the
# combining grapheme joiner, the Hangul fillers, Khmer's inherent vowels, the Mongolian
# selectors and vowel separator, the zero-width spaces and joiners, bidi controls, the
# invisible operators, variation selectors, the byte-order mark, shorthand and musical
# format controls, and the tag characters with the plane-14 block around them.
INVISIBLE = frozenset(
    (
        0x00AD,
        0x034F,
        0x061C,
        0x115F,
        0x1160,
        0x17B4,
        0x17B5,
        *range(0x180B, 0x1810),
        *range(0x200B, 0x2010),
        *range(0x202A, 0x202F),
        *range(0x2060, 0x2070),
        0x3164,
        *range(0xFE00, 0xFE10),
        0xFEFF,
        0xFFA0,
        *range(0xFFF0, 0xFFF9),
        *range(0x1BCA0, 0x1BCA4),
        *range(0x1D173, 0x1D17B),
        *range(0xE0000, 0xE1000),
    )
)

# What prose keeps: the zero-width non-joiner and joiner (Persian and Indic words, emoji
# sequences such as 👩‍💻) and the variation selectors 1-16 (❤️ as emoji, 1️⃣) where they
# select a glyph (see STRAY_SELECTOR). A name, a path or a command keeps none of them.
JOINERS = frozenset((0x200C, 0x200D, *range(0xFE00, 0xFE10)))
HIDDEN_IN_PROSE = INVISIBLE - JOINERS

# A name also hides the braille pattern blank: it draws as a space-wide nothing, so
# ``notes\u2800.txt`` reads as ``notes .txt`` (prose keeps it: braille art is made of it).
INVISIBLE_IN_NAMES = INVISIBLE | {0x2800}

# A variation selector 1-16 that selects nothing: one at the start, after another selector
# (a run: only the first selects, and a run can spell hidden text, four bits a selector) or
# after an ASCII character none of which has variants but the keycap bases 0-9, # and *
# (1️⃣). Prose shows these, as it shows the other characters that draw as nothing.
_NO_VARIANTS = r"\x00-\x22\x24-\x29\x2b-\x2f\x3a-\x7f"  # ASCII but 0-9, # and *
STRAY_SELECTOR = rf"(?:^|(?<=[{_NO_VARIANTS}\ufe00-\ufe0f]))[\ufe00-\ufe0f]"


def show_stray_selectors(text: str, shown: Callable[[str], str]) -> str:
    """``text`` with each variation selector 1-16 that selects nothing (:data:`STRAY_SELECTOR`)
    replaced by ``shown(selector)``; those after an emoji or another symbol stay."""
    if text.isascii():
        return text
    return _stray_selector().sub(lambda match: shown(match.group()), text)


@functools.cache
def _stray_selector() -> re.Pattern[str]:
    """:data:`STRAY_SELECTOR`, compiled at the first text that may hold one (not at import:
    every worker and the app import this module)."""
    return re.compile(STRAY_SELECTOR)
