"""The multi-line prompt: Enter sends, Shift+Enter/Ctrl+J newline, ↑/↓ history, completion keys,
Ctrl+D on an empty prompt quits; images pasted (a dropped file, Ctrl+V) wait in it as chips."""

from __future__ import annotations

import re
from collections.abc import Callable

from textual import events, work
from textual.content import Content
from textual.message import Message
from textual.widgets import TextArea

from vis_core.model.images import ImageRefused, PersonImage, checked_image
from vis_tui.widgets.completion import CompletionMenu
from vis_tui.widgets.hints import Hint, fit_hints

PASTE_FOLD_LINES = 12  # a longer paste is one "[pasted N lines #k]" entry in the prompt


ASK = "Ask Vis…  ({})"
HINTS: tuple[Hint, ...] = (
    ("Enter sends", 1),
    ("Shift+Enter newline", 3),
    ("/ commands", 2),
    ("F1 keys", 0),
)


def _placeholder(width: int) -> str:
    """What an empty prompt says in ``width`` cells: "F1 keys" stays (it showed as far as
    "/ commands" where the prompt was narrow, the key to every other key cut off)."""
    return ASK.format(fit_hints(HINTS, width - Content(ASK.format("")).cell_length))


class PromptInput(TextArea):
    """Where the person writes; the screen decides what a submitted text does."""

    DEFAULT_CSS = """
    PromptInput {
        height: auto; min-height: 1; max-height: 10;
        border: tall $primary; margin: 0 1; padding: 0 1;
    }
    PromptInput:focus { border: tall $accent; }
    """

    class Submitted(Message):
        def __init__(self, text: str, images: tuple[PersonImage, ...] = ()) -> None:
            super().__init__()
            self.text = text
            self.images = images  # pasted with it (its @ images are named in the text)

    class ImagesChanged(Message):
        """An image was pasted into the prompt or removed from it."""

    class QuitRequested(Message):
        """Ctrl+D on an empty prompt: quit, as a shell does."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(
            "",
            id=id,
            soft_wrap=True,
            tab_behavior="focus",
            show_line_numbers=False,
            highlight_cursor_line=False,
            placeholder=_placeholder(80),
        )
        self.recall: list[str] = []
        self.recall_index: int | None = None
        self.draft = ""
        self.completion: CompletionMenu | None = None
        self.pull_queued: Callable[[], str | None] = lambda: None
        self.pastes: dict[str, str] = {}  # entry shown in the prompt -> the text pasted
        self.images: list[PersonImage] = []  # pasted images waiting to be sent, as chips
        self.told_no_clipboard_tool = False  # said once per run

    def on_resize(self, event: events.Resize) -> None:
        self.placeholder = _placeholder(self.content_size.width)

    # -- images --------------------------------------------------------------------------
    def add_images(self, images: list[PersonImage]) -> None:
        self.images.extend(images)
        self.post_message(self.ImagesChanged())

    def remove_last_image(self) -> bool:
        if not self.images:
            return False
        self.images.pop()
        self.post_message(self.ImagesChanged())
        return True

    def _refused(self, exc: Exception) -> None:
        self.app.notify(str(exc), title="Image not attached", severity="error", markup=False)

    def action_paste(self) -> None:
        """Ctrl+V: the clipboard's image as a chip, where a clipboard tool can read it;
        else the text, as before."""
        if self.read_only:
            return
        self._paste_clipboard()

    @work(thread=True, group="clipboard", exclusive=True, exit_on_error=False)
    def _paste_clipboard(self) -> None:
        from vis_tui.pasted_images import NoClipboardTool, clipboard_image

        try:
            data: bytes | None | NoClipboardTool = clipboard_image()
        except NoClipboardTool as exc:
            data = exc
        except (OSError, ValueError) as exc:  # the tool failed or hung: paste text then
            self.app.call_from_thread(self._refused, exc)
            data = None
        self.app.call_from_thread(self._clipboard_read, data)

    def _clipboard_read(self, data: bytes | None | Exception) -> None:
        if isinstance(data, bytes):
            try:
                self.add_images([checked_image(_named_by_type(data), data)])
            except ImageRefused as exc:
                self._refused(exc)
            return
        if isinstance(data, Exception) and not self.told_no_clipboard_tool:
            self.told_no_clipboard_tool = True
            self.app.notify(str(data), title="No clipboard tool", severity="warning", markup=False)
        super().action_paste()

    # -- pastes --------------------------------------------------------------------------
    async def _on_paste(self, event: events.Paste) -> None:
        """A paste that is only paths of image files (a drag and drop) attaches them as
        chips; a long paste is one entry in the prompt, not hundreds of lines; the text sent
        has it whole (:meth:`expanded`)."""
        from vis_tui.pasted_images import dropped_image_paths, read_dropped_image

        dropped = None if self.read_only else dropped_image_paths(event.text)
        if dropped:
            event.stop()
            event.prevent_default()
            try:
                self.add_images([read_dropped_image(path) for path in dropped])
            except ImageRefused as exc:
                self._refused(exc)
            return
        # a terminal may end the pasted lines with CR (tmux does, as typed Enter would)
        text = event.text.replace("\r\n", "\n").replace("\r", "\n")
        lines = text.count("\n") + (not text.endswith("\n"))  # a last line end ends a line
        if lines <= PASTE_FOLD_LINES or self.read_only:
            # TextArea's own handler inserts it: Textual calls each class's _on_paste in turn
            return
        event.stop()
        event.prevent_default()
        entry = f"[pasted {lines:,} lines #{len(self.pastes) + 1}]"
        self.pastes[entry] = text
        self.insert(entry)

    def expanded(self, text: str) -> str:
        """``text`` with each paste entry replaced by the text pasted."""
        for entry, pasted in self.pastes.items():
            text = text.replace(entry, pasted)
        return text

    def broken_pastes(self, text: str) -> list[str]:
        """The paste entries edited inside in ``text`` (``[pasted 5,000 lines #1`` with a
        word after it): sent so, the paste would be lost without a word."""
        return [
            entry
            for entry in self.pastes
            if entry not in text
            and re.search(rf"pasted\b[^\n]*#{entry.rsplit('#', 1)[1][:-1]}(?!\d)", text)
        ]

    def _entry_span(self, *, left: bool) -> tuple[tuple[int, int], tuple[int, int]] | None:
        """Where the paste entry the cursor is in or at (its end when deleting ``left``, its
        start when deleting right) lies: an entry is deleted whole, never cut into."""
        if not self.pastes or not self.selection.is_empty:
            return None
        row, column = self.cursor_location
        line = self.document.get_line(row)
        for entry in self.pastes:
            start = line.find(entry)
            while start != -1:
                end = start + len(entry)
                if (start < column <= end) if left else (start <= column < end):
                    return (row, start), (row, end)
                start = line.find(entry, end)
        return None

    def _delete_entry(self, *, left: bool) -> bool:
        span = self._entry_span(left=left)
        if span is not None:
            self.delete(*span)  # kept in ``pastes``: Ctrl+Z brings the entry back, working
        return span is not None

    def action_delete_left(self) -> None:
        if not self._delete_entry(left=True):
            super().action_delete_left()

    def action_delete_right(self) -> None:
        if not self._delete_entry(left=False):
            super().action_delete_right()

    def action_delete_word_left(self) -> None:
        if not self._delete_entry(left=True):
            super().action_delete_word_left()

    def action_delete_word_right(self) -> None:
        if not self._delete_entry(left=False):
            super().action_delete_word_right()

    # -- history -------------------------------------------------------------------------
    def set_history(self, prompts: list[str]) -> None:
        self.recall = list(prompts)
        self.recall_index = None

    def remember(self, text: str) -> None:
        if not self.recall or self.recall[-1] != text:
            self.recall.append(text)
        self.recall_index = None

    def give_back(self, text: str) -> str:
        """Put ``text``, typed but not sent (an unknown command), where the person finds it:
        in the prompt when it is empty, and under ↑. Says where, for the note."""
        self.remember(text)
        if self.text:
            return "↑ brings back what you typed"
        self._show(text)
        return "what you typed is back in the prompt"

    def put_aside(self) -> None:
        """Ctrl+C: the draft is cleared but kept under ↑ (its pastes whole), not lost to a
        press meant to copy."""
        self.remember(self.expanded(self.text))
        self.text, self.pastes = "", {}

    def _show(self, text: str) -> None:
        self.text = text
        lines = text.split("\n")
        self.move_cursor((len(lines) - 1, len(lines[-1])))

    def history_back(self) -> bool:
        if not self.recall:
            return False
        if self.recall_index is None:
            self.draft = self.text
            self.recall_index = len(self.recall) - 1
        elif self.recall_index == 0:
            return True
        else:
            self.recall_index -= 1
        self._show(self.recall[self.recall_index])
        return True

    def history_forward(self) -> bool:
        if self.recall_index is None:
            return False
        self.recall_index += 1
        if self.recall_index >= len(self.recall):
            self.recall_index = None
            self._show(self.draft)
        else:
            self._show(self.recall[self.recall_index])
        return True

    # -- keys ----------------------------------------------------------------------------
    def _menu(self) -> CompletionMenu | None:
        """The completion menu when it shows choices for the text as it is now: keys typed
        faster than the menu is made again (Enter among them) never take a stale choice."""
        menu = self.completion
        if menu is None or not menu.display or menu.source != self.text:
            return None
        return menu

    def complete(self) -> bool:
        menu = self._menu()
        choice = menu.selected_choice if menu else None
        if choice is None:
            return False
        row, column = self.cursor_location
        self.replace(choice.text, (row, choice.start), (row, column))
        if menu:
            menu.hide()
        return True

    def _takes_choice(self, menu: CompletionMenu | None) -> bool:
        """Whether Enter takes the menu's chosen completion instead of sending: one is
        chosen and what was typed is not it already (Enter on ``/undo`` sends it)."""
        choice = menu.selected_choice if menu is not None else None
        if choice is None:
            return False
        row, column = self.cursor_location
        typed = self.document.get_line(row)[choice.start : column]
        return typed.rstrip() != choice.text.rstrip()

    async def _on_key(self, event: events.Key) -> None:
        key = event.key
        handled = True
        menu = self._menu()
        row, _ = self.cursor_location
        last_row = self.document.line_count - 1
        if key == "enter" and self._takes_choice(menu):
            self.complete()  # "@tcalc" + Enter: the file the menu offers, not the letters
        elif key == "enter":
            text = self.text
            if menu is not None:
                menu.hide()
            images: tuple[PersonImage, ...] = ()
            broken = self.broken_pastes(text)
            if broken:  # kept, and said: the person puts it back or deletes it whole
                shown = ", ".join(broken)
                self.app.notify(
                    f"{shown} was edited, so the pasted text would not be sent. Put it back "
                    "as it was (Ctrl+Z) or delete it whole (Backspace at its end).",
                    title="Paste not sent",
                    severity="warning",
                    markup=False,
                )
                return self._stop(event)
            if text.strip():
                self.text = ""
                self.recall_index = None
                self.draft = ""
                text, self.pastes = self.expanded(text), {}
                images, self.images = tuple(self.images), []
                if images:
                    self.post_message(self.ImagesChanged())
            self.post_message(self.Submitted(text if text.strip() else "", images))
        elif key == "backspace" and self.cursor_location == (0, 0) and self.selection.is_empty:
            handled = self.remove_last_image()  # the chip nearest the cursor
        elif key == "ctrl+d" and not self.text:
            self.post_message(self.QuitRequested())
        elif key in ("shift+enter", "ctrl+j"):
            self.insert("\n")
        elif key == "tab" and menu is not None:
            self.complete()
        elif key in ("up", "down") and menu is not None:
            menu.move(-1 if key == "up" else 1)
        elif key == "up" and row == 0:
            if self.recall_index is None and not self.text:
                queued = self.pull_queued()
                if queued is not None:
                    self._show(queued)
                    return self._stop(event)
            handled = self.history_back()
        elif key == "down" and row == last_row:
            handled = self.history_forward()
        else:
            handled = False
        if handled:
            self._stop(event)
        else:
            await super()._on_key(event)

    async def take_key(self, event: events.Key) -> None:
        """Handle ``event`` as if typed here (a key typed while a row had the focus)."""
        await self._on_key(event)

    @staticmethod
    def _stop(event: events.Key) -> None:
        event.stop()
        event.prevent_default()


def _named_by_type(data: bytes) -> str:
    """``clipboard.jpg`` and the like: a clipboard image's name from its bytes."""
    from vis_core.model.images import IMAGE_TYPES, sniff

    found = sniff(data)
    suffix = IMAGE_TYPES[found[0]][1][0] if found else ".png"
    return f"clipboard{suffix}"
