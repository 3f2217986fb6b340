"""One parse of each stylesheet per test process, shared by the Textual apps of its tests.

Textual keeps parsed CSS in a cache of one ``Stylesheet``, which an app replaces at every
``reparse`` (a screen with its own CSS, a theme): every app of a test run tokenised and parsed
Vis's and Textual's widgets' ``DEFAULT_CSS`` again, several times over (4-7% of what a Pilot
test's own thread spends). A person's one app gains nothing from sharing, so this is test
infrastructure: ``install()`` wraps ``Stylesheet._parse_rules`` to parse each source once per
process and hand every caller rule sets of its own.

What is shared is what nothing changes after parsing: selectors, and rule values that are
immutable (strings, numbers, named tuples such as ``Color`` and ``Scalar``). A layout keeps
state between arranges, so each caller gets a new one of the same name, and a list of such
values (grid columns) a list of its own; a source that parses to any other kind of value, or
with errors, is not shared. The key is everything the parse reads: the text, where it was
read from, its default/tie-breaker/scope, and the stylesheet's CSS variables (a theme's
colours are substituted while parsing). tests/tui/test_css_parse_cache.py pins what this
assumes about the installed Textual.
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

_parsed: dict[tuple[Any, ...], list[RuleSet]] = {}
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
        shared = _parsed[key] = rules
    rules = self._parse_cache[own_key] = [_own(rule) for rule in shared]
    return rules


def _variables(stylesheet: Stylesheet) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(stylesheet._variables.items()))


def _shareable(rule: RuleSet) -> bool:
    """Whether ``rule`` parsed cleanly to values no app can change (or layouts, renewed)."""
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


def _own_value(value: Any) -> Any:
    if isinstance(value, Layout):
        return get_layout(value.name)
    return list(value) if type(value) is list else value


def _own(rule: RuleSet) -> RuleSet:
    """A rule set for one caller: its own containers and layouts, the shared immutable rest."""
    styles = rule.styles
    values = {name: _own_value(value) for name, value in styles._rules.items()}
    return dataclasses.replace(
        rule,
        selector_set=list(rule.selector_set),
        styles=Styles(_rules=values, important=set(styles.important)),  # type: ignore[arg-type]
        errors=[],
        selector_names=set(rule.selector_names),
        pseudo_classes=set(rule.pseudo_classes),
    )
