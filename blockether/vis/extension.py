"""``import blockether.vis.extension as vis``: the same module object as ``vis_core.extension``.

The spec's examples use this name; ``vis_core.extension`` keeps working, and both names give
one SDK (one ``vis.state``, one set of declaration classes).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import vis_core.extension as _sdk

sys.modules[__name__] = _sdk

if TYPE_CHECKING:  # what an editor sees: the SDK's names
    from vis_core.extension import *  # noqa: F403
