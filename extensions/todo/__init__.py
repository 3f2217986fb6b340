"""Bundled extension: a todo list per session with tools, a ctx listing and /todo."""

from __future__ import annotations

from typing import Any

import vis_core.extension as vis

from .items import STATE_KEY, Todo, TodoBook, TodoList

LISTED_IN_CONTEXT = 20


def _book(session_id: str | None = None) -> TodoBook:
    """The session's list in this extension's durable state (``vis.state``)."""
    if session_id is None:
        session_id = vis.session.id
    return TodoBook(vis.state, session_id)


def add(text: str) -> Todo:
    """Add a todo to this session's list and return it with its number."""
    return _book().add(text)


def list_todos() -> TodoList:
    """List this session's todos, open and done, in the order they were added."""
    return _book().items()


def done(todo_id: int) -> Todo:
    """Mark todo number ``todo_id`` as done."""
    return _book().done(todo_id)


def remove(todo_id: int) -> Todo:
    """Remove todo number ``todo_id`` from the list."""
    return _book().remove(todo_id)


def _failed(headline: str, error: Any) -> vis.ActivityPresentation:
    return vis.ActivityPresentation(headline, str(error).splitlines()[0][:400] if error else "")


def _one(headline: str):
    def render(*, phase: str, args: Any, kwargs: Any, result: Any, error: Any):
        if phase == "failure":
            return _failed(headline, error)
        if phase == "success":
            return vis.ActivityPresentation(headline, f"#{result.id} {result.text}"[:400])
        return None

    return render


def _table(todos: TodoList) -> vis.ActivityTable:
    return vis.ActivityTable(
        ("#", "Status", "Todo"),
        tuple((str(t.id), "done" if t.done else "open", t.text) for t in todos.items),
    )


def render_list(*, phase: str, args: Any, kwargs: Any, result: Any, error: Any):
    if phase == "failure":
        return _failed("List todos", error)
    if phase != "success":
        return None
    if not result.items:
        return vis.ActivityPresentation("List todos", "No todos in this session")
    summary = f"{result.open} open, {result.completed} done"
    return vis.ActivityPresentation("List todos", summary, (_table(result),))


def _ctx(env: dict[str, Any]) -> dict[str, Any]:
    """The open todos, from this session's key of ``vis.state`` alone (``ctx_state_key``)."""
    todos = TodoBook(vis.state, env["session_id"]).items()
    open_items = [f"#{t.id} {t.text}" for t in todos.items if not t.done]
    return {"todo": {"open": len(open_items), "items": open_items[:LISTED_IN_CONTEXT]}}


def _markdown(todos: TodoList) -> str:
    return "\n".join(f"- [{'x' if t.done else ' '}] **#{t.id}** {t.text}" for t in todos.items)


def _command(ctx: dict[str, Any]) -> Any:
    book = _book(ctx["session_id"])
    args = list(ctx["args"])
    action = args[0] if args else "list"
    if action == "list":
        todos = book.items()
        if not todos.items:
            return "No todos in this session"
        return vis.ok(f"{todos.open} open, {todos.completed} done", _markdown(todos))
    if action == "add":
        text = ctx["raw"].partition("add")[2].strip()
        try:
            todo = book.add(text)
        except ValueError as exc:
            return vis.err("Cannot add the todo", str(exc))
        return vis.ok(f"Added #{todo.id}", todo.text)
    if action in ("done", "remove"):
        if len(args) != 2 or not args[1].lstrip("#").isdigit():
            return vis.err(f"Usage: /todo {action} NUMBER", "`/todo` lists the numbers.")
        number = int(args[1].lstrip("#"))
        try:
            todo = getattr(book, action)(number)
        except LookupError:  # its message points the model to todo.list()
            return vis.err(
                f"Cannot {action} the todo",
                f"There is no todo #{number}; `/todo` shows the numbers.",
            )
        return vis.ok(f"{'Completed' if action == 'done' else 'Removed'} #{todo.id}", todo.text)
    return vis.err(
        f"Unknown action {action!r}",
        "Use `/todo`, `/todo add TEXT`, `/todo done NUMBER` or `/todo remove NUMBER`.",
    )


class Todos:
    """The ``todo`` namespace: ``todo.add``, ``todo.list``, ``todo.done``, ``todo.remove``."""

    @vis.method(
        tag="mutation",
        activity=vis.Activity(label="Add todo", render=_one("Add todo"), show_start=False),
    )
    def add(self, text: str) -> Todo:
        """Add a todo to this session's list and return it with its number."""
        return add(text)

    @vis.method(activity=vis.Activity(label="List todos", render=render_list, show_start=False))
    def list(self) -> TodoList:
        """List this session's todos, open and done, in the order they were added."""
        return list_todos()

    @vis.method(
        tag="mutation",
        activity=vis.Activity(
            label="Complete todo", render=_one("Complete todo"), show_start=False
        ),
    )
    def done(self, todo_id: int) -> Todo:
        """Mark todo number ``todo_id`` as done."""
        return done(todo_id)

    @vis.method(
        tag="mutation",
        activity=vis.Activity(label="Remove todo", render=_one("Remove todo"), show_start=False),
    )
    def remove(self, todo_id: int) -> Todo:
        """Remove todo number ``todo_id`` from the list."""
        return remove(todo_id)


vis.register_extension(
    vis.Extension(
        name="todo",
        alias="todo",
        description="Keep a todo list for this session.",
        prompt=(
            "Plan multi-step work with todo.add(text), todo.list(), todo.done(number) and "
            "todo.remove(number). Open todos appear in session['todo'] each turn."
        ),
        ctx=_ctx,
        ctx_state_key=STATE_KEY,
        symbols=[vis.Symbol(Todos(), name="todo")],
        slash_commands=[
            vis.SlashCommand(
                "todo",
                _command,
                doc="Show or change this session's todo list.",
                usage="/todo [add TEXT | done NUMBER | remove NUMBER]",
            ),
        ],
    )
)
