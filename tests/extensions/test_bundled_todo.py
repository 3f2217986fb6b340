"""The bundled todo extension: list logic, tools with Activities and /todo (its ctx listing,
run in a session's worker: test_state_only_ctx.py)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

import vis_core.extension as vis
from vis_core.extension_host.discovery import BUNDLED_PACKAGE, bundled_dir
from vis_core.extension_host.loaded import LoadedExtension, LoadedExtensions
from vis_core.extension_host.loader import load_extensions


@pytest.fixture
def loaded(run_here: Callable[[LoadedExtensions], LoadedExtensions]) -> LoadedExtensions:
    return run_here(load_extensions(bundled=bundled_dir(), include_packages=False))


@pytest.fixture
def todo(loaded) -> LoadedExtension:
    ext = loaded.get("todo")
    assert ext is not None, loaded.errors
    return ext


@pytest.fixture
def items() -> ModuleType:
    """The list logic, imported here to test it directly (the host never imports it)."""
    return importlib.import_module(f"{BUNDLED_PACKAGE}.todo.items")


@pytest.fixture
def state(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """``vis.state`` and ``vis.session`` stand in for the host services of issue 5."""
    store: dict[str, Any] = {}
    monkeypatch.setattr(vis, "state", store, raising=False)
    monkeypatch.setattr(vis, "session", SimpleNamespace(id="s1"), raising=False)
    return store


def test_book_adds_lists_completes_and_removes(items: ModuleType) -> None:
    store: dict[str, Any] = {}
    book = items.TodoBook(store, "s1")
    assert book.items().items == () and str(book.items()) == "No todos"
    first = book.add("  Write   the tests ")
    second = book.add("Ship it")
    assert (first.id, first.text, second.id) == (1, "Write the tests", 2)
    assert book.done(1) == items.Todo(1, "Write the tests", True)
    todos = book.items()
    assert (todos.open, todos.completed) == (1, 1)
    assert str(todos) == "[x] #1 Write the tests\n[ ] #2 Ship it"
    assert book.remove(2).text == "Ship it"
    assert book.add("Next").id == 3  # numbers are never reused
    # plain data only, so the durable store can keep it
    assert store == {
        "session:s1": {
            "next": 4,
            "items": [
                {"id": 1, "text": "Write the tests", "done": True},
                {"id": 3, "text": "Next", "done": False},
            ],
        }
    }


def test_book_keeps_sessions_apart_and_survives_a_new_book(items: ModuleType) -> None:
    store: dict[str, Any] = {}
    items.TodoBook(store, "s1").add("Mine")
    assert items.TodoBook(store, "s2").items().items == ()
    assert [t.text for t in items.TodoBook(store, "s1").items().items] == ["Mine"]


def test_book_rejects_bad_input(items: ModuleType) -> None:
    book = items.TodoBook({}, "s1")
    with pytest.raises(ValueError, match="nonblank text"):
        book.add("   ")
    with pytest.raises(ValueError, match="at most 500 characters"):
        book.add("x" * 501)
    with pytest.raises(LookupError, match=r"no todo #9; todo.list\(\) shows the numbers"):
        book.done(9)
    with pytest.raises(ValueError, match="give the todo's number"):
        book.remove("1")


def test_tools_and_their_activities(todo: LoadedExtension, state: dict[str, Any]) -> None:
    tools = {t.name: t for t in todo.tools}
    assert list(tools) == ["todo.add", "todo.list", "todo.done", "todo.remove"]
    assert [t.tag for t in tools.values()] == ["mutation", "observation", "mutation", "mutation"]

    def present(name: str, result: Any = None, error: Any = None) -> vis.ActivityPresentation:
        activity = tools[name].activity
        assert activity is not None and activity.render is not None
        phase = "failure" if error else "success"
        return activity.render(phase=phase, args=(), kwargs={}, result=result, error=error)

    empty = tools["todo.list"].fn()
    assert present("todo.list", empty).summary == "No todos in this session"
    added = tools["todo.add"].fn("Write the tests")
    assert present("todo.add", added).summary == "#1 Write the tests"
    tools["todo.add"].fn("Ship it")
    assert present("todo.done", tools["todo.done"].fn(1)).headline == "Complete todo"
    listing = tools["todo.list"].fn()
    shown = present("todo.list", listing)
    assert shown.summary == "1 open, 1 done"
    assert shown.content[0].rows == (("1", "done", "Write the tests"), ("2", "open", "Ship it"))
    with pytest.raises(LookupError) as info:
        tools["todo.remove"].fn(7)
    assert present("todo.remove", error=info.value).summary == (
        "there is no todo #7; todo.list() shows the numbers"
    )
    assert "session:s1" in state


def test_slash_command(loaded, state) -> None:
    ((owner, command),) = loaded.slash_commands()
    assert (owner, command.name, command.saveable) == ("todo", "todo", False)

    def run(raw: str) -> Any:
        return command.run(
            {
                "channel": "tui",
                "args": raw.split(),
                "raw": raw,
                "session_id": "s1",
                "workspace_root": "/w",
                "project_root": "/w",
            }
        )

    assert run("") == "No todos in this session"
    assert run("add Write the tests") == vis.ok("Added #1", "Write the tests")
    assert run("done #1") == vis.ok("Completed #1", "Write the tests")
    assert run("add Ship it").ok
    assert run("list") == vis.ok(
        "1 open, 1 done", "- [x] **#1** Write the tests\n- [ ] **#2** Ship it"
    )
    assert run("remove 2") == vis.ok("Removed #2", "Ship it")
    # to the person, /todo shows the numbers (todo.list() is the model's call)
    for action in ("done", "remove"):
        assert run(f"{action} 9") == vis.err(
            f"Cannot {action} the todo", "There is no todo #9; `/todo` shows the numbers."
        )
    assert run("done").title == "Usage: /todo done NUMBER"
    assert run("add   ").ok is False
    assert run("frobnicate").title == "Unknown action 'frobnicate'"
