"""A vertical scroll that mounts and unmounts children without moving what is in view."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import cast

from textual.containers import VerticalScroll
from textual.geometry import Size, Spacing
from textual.reactive import Reactive
from textual.widget import Widget

# The height a widget not mounted yet will take (lines drawn ahead), or None if unknown.
HeightOf = Callable[[Widget], int | None]


def stack(items: Sequence[tuple[int, Spacing]]) -> tuple[list[int], int]:
    """Each of ``items`` (height, margin) stacked vertically: its y, and the total height
    (a margin between two is the larger of the two, as Textual's vertical layout does)."""
    ys: list[int] = []
    y = items[0][1].top if items else 0
    for index, (height, margin) in enumerate(items):
        ys.append(y)
        after = items[index + 1][1].top if index + 1 < len(items) else 0
        y += height + max(margin.bottom, after)
    return ys, y


class SteadyScroll(VerticalScroll):
    """Swaps children in one layout whose frame shows what was in view where it was.

    The scroll and the virtual height that layout will give are worked out before it, from
    the heights of the new children, so its one frame is right, scrollbar included. When they
    cannot be, the layout corrects the scroll itself, at the cost of one more frame."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._keep: tuple[Widget, int, float] | None = None  # anchor, its y, the scroll

    async def swap_children(
        self,
        above: Sequence[Widget],
        below: Sequence[Widget],
        removed: Sequence[Widget],
        *,
        after: Widget | None,
        height_of: HeightOf,
    ) -> None:
        """Mount ``above`` first and ``below`` after ``after`` (else last), and unmount
        ``removed``; the first child kept holds its place on screen."""
        kept = [child for child in self.children if child not in removed]
        anchor = kept[0] if kept else None
        anchor_y = anchor.virtual_region.y if anchor is not None else 0
        old_y = self.scroll_y
        order = [*above, *kept]
        at = order.index(after) + 1 if after in order else len(order)
        order[at:at] = below
        new = {*above, *below}
        plan = self._plan(order, new, anchor, height_of) if anchor is not None else None
        waits: list[Awaitable[None]] = [self.remove_children(removed)] if removed else []
        if above:
            waits.append(self.mount_all(above, before=anchor) if anchor else self.mount_all(above))
        if below:
            waits.append(self.mount_all(below, after=after) if after else self.mount_all(below))
        if anchor is not None:
            if plan is not None:  # the layout that places them draws them scrolled
                shift, height = plan
                self._scroll_now(old_y + shift, height)
            self._keep = (anchor, anchor_y, old_y)  # checked by that layout
        with self.app.batch_update():  # one layout: the mounts, the removals and the scroll
            for wait in waits:
                await wait
        if anchor is not None:
            self.call_after_refresh(self._keep_place)  # if no layout has checked it yet

    def _plan(
        self, order: list[Widget], new: set[Widget], anchor: Widget, height_of: HeightOf
    ) -> tuple[int, int] | None:
        """How far ``anchor`` moves when the children are ``order`` (``new`` ones not mounted
        yet), and their virtual height; None when that cannot be known before the layout."""
        shown = [child for child in self.children if child.display]
        if anchor not in shown:
            return None
        old_ys, old_height = stack([(c.outer_size.height, c.styles.margin) for c in shown])
        if old_height != self.virtual_size.height:
            return None  # not as the last layout placed them
        items: list[tuple[int, Spacing]] = []
        placed: list[Widget] = []
        for child in order:
            if child in new:
                height = height_of(child)
                if height is None:
                    return None
                items.append((height, self._margin_of(child)))
            elif child.display:
                items.append((child.outer_size.height, child.styles.margin))
            else:
                continue
            placed.append(child)
        ys, height = stack(items)
        return ys[placed.index(anchor)] - old_ys[shown.index(anchor)], height

    def _margin_of(self, widget: Widget) -> Spacing:
        """The margin a widget not mounted yet will have: a mounted sibling's of its type."""
        like = next((c for c in self.children if type(c) is type(widget)), None)
        return like.styles.margin if like is not None else Spacing()

    def _scroll_now(self, y: float, height: int | None = None) -> None:
        """Scroll to ``y`` for the next layout (beyond the current end if content is coming).

        With the virtual ``height`` that layout will give, the scrollbar it draws is already
        right: Textual would otherwise redraw it one frame later."""
        bar = self.vertical_scrollbar
        if height is not None:
            # the class attribute is the descriptor (its stub also allows the instance value)
            virtual_size = cast("Reactive[Size]", Widget.virtual_size)
            self.set_reactive(virtual_size, Size(self.virtual_size.width, height))
            bar.window_virtual_size = height
        self.set_scroll(None, y)
        bar.position = round(y)

    def _keep_place(self) -> None:
        """Hold the anchor where it was on screen; a wrong plan costs one more frame."""
        keep, self._keep = self._keep, None
        if keep is not None and keep[0].is_attached:
            anchor, anchor_y, old_y = keep
            y = round(old_y + anchor.virtual_region.y - anchor_y)
            if y != round(self.scroll_y):
                self._scroll_now(y)
                self._refresh_scroll()

    def _size_updated(
        self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True
    ) -> bool:
        """Check the scroll during the layout that placed swapped children."""
        changed = super()._size_updated(size, virtual_size, container_size, layout)
        if self._keep is not None:
            self._keep_place()
        return changed
