"""The todo list of one session, kept as plain data in a durable mapping."""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any

import vis_core.extension as vis

MAX_TEXT_CHARS = 500
# the key of ``vis.state`` that keeps a session's list (the todo ctx reads it alone)
STATE_KEY = "session:{session_id}"


@dataclass(frozen=True)
class Todo:
    """One item: its number in the session, its text and whether it is done."""

    id: int
    text: str
    done: bool = False

    def __str__(self) -> str:
        return f"[{'x' if self.done else ' '}] #{self.id} {self.text}"


@vis.sequence(field="items")
@dataclass(frozen=True)
class TodoList:
    """Every todo of the session in the order they were added."""

    items: tuple[Todo, ...]

    @property
    def open(self) -> int:
        return sum(1 for item in self.items if not item.done)

    @property
    def completed(self) -> int:
        return sum(1 for item in self.items if item.done)

    def __str__(self) -> str:
        return "\n".join(str(item) for item in self.items) or "No todos"


class TodoBook:
    """Add, list, complete and remove the todos of ``session_id`` in ``store``."""

    def __init__(self, store: MutableMapping[str, Any], session_id: str | None) -> None:
        self._store = store
        self._key = STATE_KEY.format(session_id=session_id or "none")

    def _load(self) -> dict[str, Any]:
        data = self._store.get(self._key)
        if not isinstance(data, dict):
            return {"next": 1, "items": []}
        return {"next": int(data.get("next", 1)), "items": list(data.get("items", []))}

    def _save(self, data: dict[str, Any]) -> None:
        self._store[self._key] = data

    def items(self) -> TodoList:
        data = self._load()
        return TodoList(
            tuple(Todo(int(i["id"]), str(i["text"]), bool(i["done"])) for i in data["items"])
        )

    def add(self, text: str) -> Todo:
        if not isinstance(text, str) or not text.strip():
            raise ValueError("a todo needs nonblank text, such as 'Write the tests'")
        text = " ".join(text.split())
        if len(text) > MAX_TEXT_CHARS:
            raise ValueError(
                f"a todo has at most {MAX_TEXT_CHARS} characters; this one has {len(text)}"
            )
        data = self._load()
        todo = Todo(data["next"], text)
        data["items"].append({"id": todo.id, "text": todo.text, "done": False})
        data["next"] += 1
        self._save(data)
        return todo

    def _find(self, data: dict[str, Any], todo_id: int) -> int:
        if isinstance(todo_id, bool) or not isinstance(todo_id, int):
            raise ValueError(f"give the todo's number, such as 1; got {todo_id!r}")
        for index, item in enumerate(data["items"]):
            if item["id"] == todo_id:
                return index
        raise LookupError(f"there is no todo #{todo_id}; todo.list() shows the numbers")

    def done(self, todo_id: int) -> Todo:
        data = self._load()
        index = self._find(data, todo_id)
        data["items"][index] = {**data["items"][index], "done": True}
        self._save(data)
        item = data["items"][index]
        return Todo(item["id"], item["text"], True)

    def remove(self, todo_id: int) -> Todo:
        data = self._load()
        index = self._find(data, todo_id)
        item = data["items"].pop(index)
        self._save(data)
        return Todo(item["id"], item["text"], bool(item["done"]))
