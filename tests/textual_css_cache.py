"""One parse of each stylesheet per test process, shared by the Textual apps of its tests.

Textual keeps parsed CSS in a cache of one ``Stylesheet``, which an app replaces at every
``reparse`` (a screen with its own CSS, a theme): every app of a test run tokenised and parsed
Vis's and Textual's widgets' ``DEFAULT_CSS`` again, several times over (4-7% of what a Pilot
test's own thread spends). A person's one app gains nothing from sharing, so this is test
infrastructure: ``install()`` wraps ``Stylesheet._parse_rules`` to parse each source once per
process for every app.

What is shared is what no app changes after parsing: rule sets whose values are immutable
(strings, numbers, named tuples such as ``Color`` and ``Scalar``), and the selectors of all.
A layout keeps state between arranges, so a rule set with one is each caller's own, with a
new layout of the same name (and its own copy of a list of values, such as grid columns); a
source that parses to any other kind of value, or with errors, is not shared. The key is
everything the parse reads: the text, where it was read from, its default/tie-breaker/scope,
and the stylesheet's CSS variables (a theme's colours are substituted while parsing).
tests/tui/test_css_parse_cache.py pins what this assumes about the installed Textual.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

from rich.style import Style
from textual.css.model import RuleSet
from textual.css.styles import Styles
from textual.css.stylesheet import Stylesheet
from textual.layout import Layout
from textual.layouts.factory import get_layout

_parsed: dict[tuple[Any, ...], list[tuple[RuleSet, bool]]] = {}  # rule set, has layouts/lists
_textual_parse = Stylesheet._parse_rules


def install() -> None:
    """Share parsed stylesheets between the apps of this process (again: no change)."""
    Stylesheet._parse_rules = _parse_rules  # type: ignore[method-assign]


def _parse_rules(
    self: Stylesheet,
    css: str,
    read_from: tuple[str, str],
    is_default_rules: bool = False,
    tie_breaker: int = 0,
    scope: str = "",
) -> list[RuleSet]:
    """``Stylesheet._parse_rules``: from the stylesheet's own cache as Textual does, else
    from the process's parse of the same source, else parsed (and kept if shareable)."""
    own_key = (css, read_from, is_default_rules, tie_breaker, scope)
    rules = self._parse_cache.get(own_key)
    if rules is not None:
        return rules
    key = (*own_key, _variables(self))
    shared = _parsed.get(key)
    if shared is None:
        rules = _textual_parse(self, css, read_from, is_default_rules, tie_breaker, scope)
        if not all(_shareable(rule) for rule in rules):
            return rules
        shared = _parsed[key] = [(rule, _has_state(rule)) for rule in rules]
    rules = self._parse_cache[own_key] = [_own(rule) if state else rule for rule, state in shared]
    return rules


def _variables(stylesheet: Stylesheet) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(stylesheet._variables.items()))


def _shareable(rule: RuleSet) -> bool:
    """Whether ``rule`` parsed cleanly to values no app changes, but for layouts and lists
    (which :func:`_own` gives each caller)."""
    return not rule.errors and all(
        isinstance(value, Layout)
        or _immutable(value)
        or (type(value) is list and _immutable(tuple(value)))
        for value in rule.styles._rules.values()
    )


def _immutable(value: object) -> bool:
    if value is None or isinstance(value, str | int | float | enum.Enum | Style):
        return True  # bool is an int; rich's Style is immutable by design
    return isinstance(value, tuple) and all(_immutable(item) for item in value)


def _has_state(rule: RuleSet) -> bool:
    return any(isinstance(value, Layout | list) for value in rule.styles._rules.values())


def _own(rule: RuleSet) -> RuleSet:
    """``rule`` for one caller: new layouts of the same names, and lists of its own."""
    values = {
        name: get_layout(value.name)
        if isinstance(value, Layout)
        else list(value)
        if type(value) is list
        else value
        for name, value in rule.styles._rules.items()
    }
    styles = Styles(_rules=values, important=rule.styles.important)  # type: ignore[arg-type]
    return dataclasses.replace(rule, styles=styles)
