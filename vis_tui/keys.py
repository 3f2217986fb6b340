"""Every key binding of the app, in one table the help screen shows."""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding

# Ctrl+C on a modal screen, which Textual keeps from the app's own bindings: as everywhere,
# a selection is copied, else a second press quits (VisApp.action_help_quit).
QUIT_KEY = Binding("ctrl+c", "app.help_quit", "Copy, or quit on a second press", show=False)


@dataclass(frozen=True)
class KeyHelp:
    keys: str
    what: str
    where: str = "anywhere"


KEYS: tuple[KeyHelp, ...] = (
    KeyHelp("Enter", "send the prompt (queued while a turn runs)", "prompt"),
    KeyHelp("Enter (empty prompt)", "send the messages held after a cancel", "prompt"),
    KeyHelp("Shift+Enter, Ctrl+J", "insert a newline", "prompt"),
    KeyHelp("↑ / ↓", "earlier / later prompts; ↓ past the newest restores the draft", "prompt"),
    KeyHelp("↑ (empty prompt)", "pull the newest queued message back for editing", "prompt"),
    KeyHelp("/", "slash command completion; Tab or Enter completes, ↑/↓ choose", "prompt"),
    KeyHelp(
        "@path", "complete a workspace file (Tab, Enter); its text goes with the request", "prompt"
    ),
    KeyHelp(
        "@shot.png", "send a workspace image with the request (PNG, JPEG, GIF, WebP)", "prompt"
    ),
    KeyHelp("Ctrl+V", "paste the clipboard's image as a chip (else its text)", "prompt"),
    KeyHelp("drop a file", "an image file's path pasted or dropped becomes a chip", "prompt"),
    KeyHelp("Backspace (at start)", "remove the last pasted image chip", "prompt"),
    KeyHelp("!command", "run a command in the workspace; the model reads its output", "prompt"),
    KeyHelp("Ctrl+G", "edit the prompt in $VISUAL / $EDITOR; saving brings it back", "prompt"),
    KeyHelp("Esc", "cancel the running turn (queued messages wait); again: drop them"),
    KeyHelp("Ctrl+C", "clear the draft, then cancel the running turn, then quit on a second press"),
    KeyHelp("Ctrl+D (empty prompt)", "quit Vis, as in a shell (also Ctrl+C twice)", "prompt"),
    KeyHelp("F1, Ctrl+X ?", "show this list of keys"),
    KeyHelp("F2", "open Settings (also /settings)"),
    KeyHelp("F3, Ctrl+X p", "close the side panel of live views, or open it again"),
    KeyHelp("Ctrl+X c", "copy the last answer to the clipboard"),
    KeyHelp("Ctrl+X a", "copy the selected Activity to the clipboard"),
    KeyHelp("Ctrl+X t", "copy the whole session to the clipboard, as /export md writes it"),
    KeyHelp("Ctrl+X s", "open the sessions picker (also /sessions)"),
    KeyHelp("Ctrl+X n", "start a new session (also /new)"),
    KeyHelp("Tab / Shift+Tab", "move focus between the prompt, Activities that open, and paths"),
    KeyHelp(
        "Enter, Space, click",
        "open or close an Activity, a block of code or a section; open a path in $EDITOR",
        "transcript",
    ),
    KeyHelp("↑ / ↓", "previous / next Activity", "transcript"),
    KeyHelp("Esc", "back to the prompt", "transcript"),
    KeyHelp("End", "follow the newest output again", "transcript"),
    KeyHelp("any letter, Enter", "goes to the prompt (row keys are never text)", "transcript"),
    KeyHelp("PageUp / PageDown", "scroll the transcript; older turns load at the top"),
    KeyHelp("Ctrl+Home / Ctrl+End", "jump to the start / end (Ctrl+End follows again)"),
    KeyHelp("Enter", "next field; in the last field, submit the form", "forms"),
    KeyHelp("Ctrl+S", "submit the form", "forms"),
    KeyHelp("Esc, q, F1", "close this screen", "help"),
    KeyHelp("Esc", "close the sessions picker (letters go to its search)", "sessions"),
    KeyHelp("a / s / d", "approve, sync or discard the draft (discard: twice)", "/draft"),
)

CHORD_PREFIX = "ctrl+x"
CHORD_ACTIONS: dict[str, str] = {
    "question_mark": "app.help",
    "c": "copy_answer",
    "a": "copy_activity",
    "t": "copy_transcript",
    "s": "app.sessions",
    "n": "app.new_session",
    "p": "toggle_panel",
}
