"""The terminal driver: Textual's, with an input thread that stops at once when asked."""

from __future__ import annotations

import os
import selectors
from codecs import getincrementaldecoder

from textual._loop import loop_last
from textual._parser import ParseError
from textual._xterm_parser import XTermParser
from textual.drivers.linux_driver import LinuxDriver


class PromptDriver(LinuxDriver):
    """Textual's Linux driver, whose input thread also watches a pipe its stop writes to.

    Textual's thread looks at its stop flag between waits of 0.1 s for a key, then waits 0.1 s
    more for input still coming, and quitting (or suspending for the editor) joins it: up to
    0.2 s spent waiting on no key. Here the stop wakes the thread, which reads what the
    terminal already sent and ends; input after that is flushed, as Textual flushes it."""

    _wake: tuple[int, int] | None = None  # the pipe's read and write ends

    def start_application_mode(self) -> None:
        self._wake = os.pipe()
        super().start_application_mode()  # starts the input thread

    def disable_input(self) -> None:
        wake, self._wake = self._wake, None
        if wake is not None and not self.exit_event.is_set():
            os.write(wake[1], b"!")  # the thread ends; Textual's stop joins it
        super().disable_input()
        if wake is not None:
            os.close(wake[0])
            os.close(wake[1])

    def run_input_thread(self) -> None:
        """Textual's loop (textual/drivers/linux_driver.py, pinned in pyproject.toml), with
        the wake pipe; keys are parsed and posted as there."""
        assert self._wake is not None, "start_application_mode makes the pipe"
        wake_read = self._wake[0]
        selector = selectors.SelectSelector()
        selector.register(self.fileno, selectors.EVENT_READ)
        selector.register(wake_read, selectors.EVENT_READ)
        parser = XTermParser(self._debug)
        decode = getincrementaldecoder("utf-8")().decode

        def process(ready: list[tuple[selectors.SelectorKey, int]], final: bool = False) -> None:
            keys = [(key, mask) for key, mask in ready if key.fd == self.fileno]
            for last, (_key, mask) in loop_last(keys):
                if mask & selectors.EVENT_READ:
                    data = decode(os.read(self.fileno, 1024 * 4), final=final and last)
                    if not data:  # stdin is a pipe
                        break
                    for event in parser.feed(data):
                        self.process_message(event)
            for event in parser.tick():
                self.process_message(event)

        try:
            while not self.exit_event.is_set():
                ready = selector.select(0.1)
                process(ready)
                if any(key.fd == wake_read for key, _mask in ready):
                    break
            process(selector.select(0), final=True)  # what the terminal sent before the stop
        finally:
            selector.close()
            try:
                for _event in parser.feed(""):
                    pass
            except (EOFError, ParseError):
                pass
