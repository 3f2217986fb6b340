"""Reads a Chat Completions answer delta by delta: text, thinking and tool-call pieces."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from enum import StrEnum
from typing import Any

from vis_core.model.conversation import (
    TextDelta,
    ThinkingDelta,
    ToolCall,
    ToolCallStarted,
)
from vis_core.providers.base import StreamEvent
from vis_core.providers.common import read_tool_call

# Reasoning text that OpenAI-compatible servers stream beside ``content`` (DeepSeek, vLLM,
# llama.cpp: ``reasoning_content``; OpenRouter, Ollama: ``reasoning``).
REASONING_CONTENT = "reasoning_content"
_REASONING_FIELDS = (REASONING_CONTENT, "reasoning")


def _kind(value: Any) -> str:
    """What a JSON value is, as an error names it."""
    if value is None:
        return "null"
    names = {bool: "a boolean", int: "a number", float: "a number", str: "text"}
    names.update({list: "a list", dict: "an object"})
    return names.get(type(value), type(value).__name__)


def _part_text(part: Any, key: str) -> str:
    """The text of a typed content part: a string, or a list of ``text`` parts (Mistral's
    ``thinking`` part holds one)."""
    value = part.get(key)
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(_part_text(p, "text") for p in value if _is_part(p, "text"))
    raise TypeError(f"a content part's {key} is {_kind(value)}, not text")


def _is_part(part: Any, kind: str) -> bool:
    if not isinstance(part, dict):
        raise TypeError(f"a content part is {_kind(part)}, not an object")
    return part.get("type") == kind


def content_events(content: Any) -> list[TextDelta | ThinkingDelta]:
    """What a delta's ``content`` holds: text, or a list of typed parts (Mistral's Magistral:
    ``text`` parts are text, ``thinking`` parts thinking). Another shape raises TypeError
    saying what came instead."""
    if content is None or isinstance(content, str):
        return [TextDelta(content)] if content else []
    if not isinstance(content, list):
        raise TypeError(f"content is {_kind(content)}, not text or a list of parts")
    events: list[TextDelta | ThinkingDelta] = []
    for part in content:
        if _is_part(part, "text"):
            events.append(TextDelta(_part_text(part, "text")))
        elif _is_part(part, "thinking"):
            events.append(ThinkingDelta(_part_text(part, "thinking")))
        else:
            raise TypeError(
                f"a content part of type {part.get('type')!r} is neither text nor thinking"
            )
    return [e for e in events if e.text]


def text_or_none(value: Any, what: str) -> str | None:
    """``value`` when it is text or missing; else a TypeError saying ``what`` it is instead."""
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"{what} is {_kind(value)}, not text")


def whole_answer(body: str) -> dict[str, Any] | None:
    """A whole ``chat.completion`` (from a server that ignores ``stream: true``) as the one
    chunk that would stream it: each choice's message is its delta, its tool calls indexed,
    and it is finished. None when ``body`` is not one."""
    try:
        data = json.loads(body)
    except ValueError:
        return None
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices:
        return None
    streamed = []
    for choice in choices:
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            return None
        calls = message.get("tool_calls")
        if isinstance(calls, list):
            calls = [{**c, "index": i} if isinstance(c, dict) else c for i, c in enumerate(calls)]
            message = {**message, "tool_calls": calls}
        finish = choice.get("finish_reason") or "stop"
        streamed.append({**choice, "delta": message, "finish_reason": finish})
    return {**data, "object": "chat.completion.chunk", "choices": streamed}


class _Calls:
    """Tool-call pieces gathered by index. Some servers repeat the name (and id) in every
    chunk, some leave ``index`` out: a repeated name is not appended, a missing index
    continues the call the id names, else the latest one. Arguments sent as a JSON object
    instead of its text (some servers do) are that object's JSON text. Arguments that are
    ``{}`` and then go on are a placeholder the rest replaces (Gemini's compatible API sends
    ``{}``, then the whole arguments)."""

    def __init__(self) -> None:
        self.parts: dict[int, dict[str, Any]] = {}

    def add(self, part: Any) -> str | None:
        """Add a streamed piece; the call's name when this piece first tells it."""
        part_id = text_or_none(part.id, "a tool call's id")
        index = part.index if isinstance(part.index, int) else None
        if index is None:
            same = [i for i, c in self.parts.items() if part_id and c["id"] == part_id]
            index = same[0] if same else (max(self.parts) if self.parts else 0)
            if part_id and not same and self.parts:
                index = max(self.parts) + 1
        call = self.parts.setdefault(index, {"id": "", "name": "", "arguments": []})
        if part_id and not call["id"]:
            call["id"] = part_id
        function = part.function
        if function is None:
            return None
        name = text_or_none(function.name, "a tool call's name")
        arguments = function.arguments
        if isinstance(arguments, dict):
            arguments = json.dumps(arguments, ensure_ascii=False)
        arguments = text_or_none(arguments, "a tool call's arguments")
        named = bool(name and not call["name"])
        if named:
            call["name"] = name
        if arguments:
            if call["arguments"] == ["{}"]:
                call["arguments"].clear()
            call["arguments"].append(arguments)
        return call["name"] if named else None

    def chars(self) -> int:
        """How many characters the calls' names and arguments hold."""
        return sum(len(c["name"]) + sum(map(len, c["arguments"])) for c in self.parts.values())

    def ready(self, *, cut: bool) -> list[ToolCall]:
        """The calls, in order; ``cut``: the answer stopped at its output limit."""
        calls = []
        for index in sorted(self.parts):
            call = self.parts[index]
            call_id = call["id"] or f"call_{uuid.uuid4().hex[:24]}"
            calls.append(read_tool_call(call_id, call["name"], "".join(call["arguments"]), cut=cut))
        return calls


_OPEN, _CLOSE = "<think>", "</think>"


def _closing_start(text: str) -> int:
    """How many characters at the end of ``text`` may begin the closing tag."""
    return next((n for n in range(len(_CLOSE) - 1, 0, -1) if text.endswith(_CLOSE[:n])), 0)


class _Place(StrEnum):
    START = "start"  # only whitespace, or the start of the opening tag, seen so far
    THINKING = "thinking"
    ANSWER = "answer"


class LeadingThink:
    """Splits a ``<think>…</think>`` block that opens the answer's text off as thinking: Qwen3
    and DeepSeek-R1 distills write their reasoning so when the server (Ollama, LM Studio,
    llama.cpp) does not parse it out. The tags may arrive split across deltas; a block later
    in the text is the answer's own."""

    def __init__(self) -> None:
        self._place = _Place.START
        self._held = ""  # text that may still be (part of) a tag
        self._trim = False  # drop the whitespace that opens the thinking or the answer after it

    def feed(self, text: str) -> list[TextDelta | ThinkingDelta]:
        """What ``text``, the next piece of the answer's text, holds."""
        if self._trim:
            text = text.lstrip()
            self._trim = not text
        if self._place is _Place.ANSWER:
            return [TextDelta(text)] if text else []
        self._held += text
        if self._place is _Place.START:
            lead = self._held.lstrip()
            if _OPEN.startswith(lead):
                return []  # too little to tell
            if not lead.startswith(_OPEN):
                self._place = _Place.ANSWER
                return self.end()
            self._place = _Place.THINKING
            self._held = lead[len(_OPEN) :].lstrip()
            self._trim = not self._held
        end = self._held.find(_CLOSE)
        if end < 0:  # all but an end that may begin the closing tag is thinking
            cut = len(self._held) - _closing_start(self._held)
            thought, self._held = self._held[:cut], self._held[cut:]
            return [ThinkingDelta(thought)] if thought else []
        thought, rest = self._held[:end], self._held[end + len(_CLOSE) :]
        self._place, self._held, self._trim = _Place.ANSWER, "", True
        return [*([ThinkingDelta(thought)] if thought else []), *self.feed(rest)]

    def end(self) -> list[TextDelta | ThinkingDelta]:
        """The text held back: thinking inside an unclosed block, else text."""
        held, self._held = self._held, ""
        if not held:
            return []
        return [ThinkingDelta(held) if self._place is _Place.THINKING else TextDelta(held)]


class AnswerReader:
    """The events of one answer, read delta by delta.

    Reasoning fields and thinking parts become thinking, the rest of ``content`` text, tool
    calls gather by index. Reasoning streamed in ``reasoning_content`` ends with a delta
    signed ``reasoning_mark`` (when given), so it can go back to the server that sent it.
    A field of the wrong type raises TypeError saying so (the caller quotes the event).
    """

    def __init__(self, reasoning_mark: str) -> None:
        self.mark = reasoning_mark
        self.calls = _Calls()
        self.text_chars = 0
        self._think = LeadingThink()
        self._unsigned = False  # reasoning_content streamed and not yet signed

    @property
    def chars(self) -> int:
        """How many characters were answered: text, calls' names and arguments."""
        return self.text_chars + self.calls.chars()

    def read(self, delta: Any) -> Iterator[StreamEvent]:
        """The events of one delta."""
        for name in _REASONING_FIELDS:
            reasoning = getattr(delta, name, None)
            if isinstance(reasoning, str) and reasoning:
                yield ThinkingDelta(reasoning)
                self._unsigned |= name == REASONING_CONTENT and bool(self.mark)
                break
        events = content_events(delta.content)
        if events:
            yield from self._sign()  # the reasoning block ends where the content starts
        for event in events:
            if isinstance(event, TextDelta):
                yield from self._text(self._think.feed(event.text))
            else:
                yield event
        for part in delta.tool_calls or ():
            began = self.calls.add(part)
            if began:
                yield ToolCallStarted(began)

    def end(self) -> Iterator[StreamEvent]:
        """What is left to say when the answer ends."""
        yield from self._sign()
        yield from self._text(self._think.end())

    def _text(self, events: list[TextDelta | ThinkingDelta]) -> Iterator[StreamEvent]:
        for event in events:
            if isinstance(event, TextDelta):
                self.text_chars += len(event.text)
            yield event

    def _sign(self) -> Iterator[StreamEvent]:
        if self._unsigned:
            self._unsigned = False
            yield ThinkingDelta(signature=self.mark)
