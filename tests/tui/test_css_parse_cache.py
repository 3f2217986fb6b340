"""What tests/textual_css_cache.py assumes about the installed Textual: fails when it changes."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
from pathlib import Path

import textual.widgets
import textual_css_cache
from textual.app import App
from textual.css.model import RuleSet
from textual.css.styles import Styles
from textual.css.stylesheet import Stylesheet
from textual.dom import DOMNode
from textual.layout import Layout

import vis_tui

from .conftest import Harness


def _every_css() -> list[tuple[tuple[str, str], str]]:
    """Where and what: the ``DEFAULT_CSS`` of every Textual and Vis widget and screen, and
    Vis's ``.tcss`` files."""
    for name in textual.widgets.__all__:
        getattr(textual.widgets, name)
    for module in pkgutil.walk_packages(vis_tui.__path__, "vis_tui."):
        importlib.import_module(module.name)
    found: list[tuple[tuple[str, str], str]] = []
    classes = [DOMNode]
    while classes:
        cls = classes.pop()
        classes.extend(cls.__subclasses__())
        css = cls.__dict__.get("DEFAULT_CSS", "")
        if css and cls.__module__.startswith(("textual.", "vis_tui.")):
            found.append(((inspect.getfile(cls), f"{cls.__name__}.DEFAULT_CSS"), css))
    folder = Path(vis_tui.__file__).parent
    found += [((str(path), ""), path.read_text()) for path in sorted(folder.rglob("*.tcss"))]
    return found


def _fresh_parse(css: str, read_from: tuple[str, str], variables: dict[str, str]) -> list[RuleSet]:
    return textual_css_cache._textual_parse(Stylesheet(variables=variables), css, read_from)


def _shape(rules: list[RuleSet]) -> list[tuple[object, ...]]:
    """Everything a rule set holds, comparable between two parses (a layout by its name and
    state): what an app could have changed in it."""
    return [
        (
            _state(rule, "selector_set", "styles"),
            [
                (_state(s, "selectors"), [_state(x, "_check") for x in s.selectors])
                for s in rule.selector_set
            ],
            _state(rule.styles, "_rules", "get_rule", "has_rule"),
            {
                k: (v.name, vars(v)) if isinstance(v, Layout) else v
                for k, v in rule.styles._rules.items()
            },
        )
        for rule in rules
    ]


def _state(thing: object, *but: str) -> dict[str, object]:
    """The fields and attributes of ``thing`` but those named ``but`` (compared apart)."""
    names = [field.name for field in dataclasses.fields(thing)]  # type: ignore[arg-type]
    names += getattr(thing, "__dict__", {})
    return {name: getattr(thing, name) for name in names if name not in but}


def test_the_wrapped_parse_takes_what_textuals_takes() -> None:
    """The shared parse stands in for ``Stylesheet._parse_rules`` with its arguments, and a
    rule set and its styles hold what it copies (new fields would need a look)."""
    assert list(inspect.signature(textual_css_cache._textual_parse).parameters) == [
        "self",
        "css",
        "read_from",
        "is_default_rules",
        "tie_breaker",
        "scope",
    ]
    assert [f.name for f in dataclasses.fields(RuleSet)] == [
        "selector_set",
        "styles",
        "errors",
        "is_default_rules",
        "tie_breaker",
        "selector_names",
        "pseudo_classes",
    ]
    assert [f.name for f in dataclasses.fields(Styles)] == [
        "node",
        "_rules",
        "_updates",
        "important",
    ]
    assert Stylesheet._parse_rules is textual_css_cache._parse_rules  # installed by conftest


def test_every_widgets_css_is_shared_and_parses_as_textual_parses_it() -> None:
    """Each source Vis's app reads parses to values the cache may share (none an app can
    change but layouts, which each caller gets new), and what a caller gets is what Textual
    parses."""
    variables = App().get_css_variables()
    sources = _every_css()
    assert len(sources) > 50
    for read_from, css in sources:
        fresh = _fresh_parse(css, read_from, variables)
        assert all(textual_css_cache._shareable(rule) for rule in fresh), read_from
        mine = Stylesheet(variables=variables)._parse_rules(css, read_from)
        theirs = Stylesheet(variables=variables)._parse_rules(css, read_from)
        assert _shape(mine) == _shape(theirs) == _shape(fresh), read_from


def test_each_caller_gets_its_own_layouts_and_lists() -> None:
    """A rule set with a layout (or a list) is each caller's own; one of plain values is
    shared."""
    css = "A { layout: stream; } B { layout: grid; grid-columns: 1fr 2fr; } C { width: 1fr; }"
    first, second = (Stylesheet()._parse_rules(css, ("here", "A.DEFAULT_CSS")) for _ in range(2))
    for mine, theirs in zip(first[:2], second[:2], strict=True):
        assert mine is not theirs and mine.styles is not theirs.styles
        assert mine.styles._rules is not theirs.styles._rules
        assert mine.styles.layout is not theirs.styles.layout
        assert mine.styles.layout.name == theirs.styles.layout.name
    assert first[1].styles.grid_columns == second[1].styles.grid_columns
    assert first[1].styles._rules["grid_columns"] is not second[1].styles._rules["grid_columns"]
    assert first[2] is second[2]
    assert _shape(first) == _shape(second) == _shape(_fresh_parse(css, ("here", ""), {}))


def test_the_themes_variables_are_part_of_what_is_shared() -> None:
    """A variable is substituted while parsing: another theme's value is another parse."""
    css = "Widget { color: $accent; }"
    red = Stylesheet(variables={"accent": "red"})._parse_rules(css, ("here", ""))
    blue = Stylesheet(variables={"accent": "blue"})._parse_rules(css, ("here", ""))
    assert red[0].styles.color != blue[0].styles.color


async def test_an_app_changes_nothing_that_is_shared(harness: Harness) -> None:
    """What apps share is as parsed after an app ran on it (arranged, styled, themed)."""
    async with harness.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        harness.theme = "textual-light"
        await pilot.pause()
    before = _shared()
    assert before
    second = Harness(harness.main.workspace)
    async with second.run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        second.theme = "textual-dark"
        await pilot.pause()
    assert {key: shape for key, shape in _shared().items() if key in before} == before


def _shared() -> dict[tuple[object, ...], list[tuple[object, ...]]]:
    return {
        key: _shape([rule for rule, _ in shared])
        for key, shared in textual_css_cache._parsed.items()
    }
