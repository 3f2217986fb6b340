"""Characters that draw as nothing: which ones, and which of them prose may keep.

A name or a line can hide text in them: ``setup\\u200c.py`` draws as ``setup.py`` beside the
real one, tag characters (U+E0020…U+E007E) spell ASCII no one sees (``rm`` and a hidden
`` -rf``), and a bidi control makes ``evil\\u202etxt.exe`` read as another name. The CLI
(:mod:`vis_core.terminal`, :mod:`vis_core.model.lines`) and the app (``vis_tui``) build
their tables from these sets, so both show the same characters.
"""

from __future__ import annotations

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
# sequences such as 👩‍💻) and the variation selectors 1-16 (❤️ as emoji, 1️⃣). A name, a
# path or a command keeps none of them.
JOINERS = frozenset((0x200C, 0x200D, *range(0xFE00, 0xFE10)))
HIDDEN_IN_PROSE = INVISIBLE - JOINERS
