"""Record fixtures from the Extension API reference (Status, PageList, TriggerResult…)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Annotated, Any

import vis_core.extension as vis


@dataclass(frozen=True)
class Status:
    env: str
    phases: tuple[int, ...] = ()

    @property
    def next_phase(self) -> int:
        return len(self.phases) + 1

    def __str__(self) -> str:
        return f"{self.env}: next phase {self.next_phase}"

    def text_report(self) -> str:
        return f"report for {self.env}"


@dataclass(frozen=True, slots=True)
class Page:
    title: str


@vis.sequence(field="results")
@dataclass(frozen=True, slots=True)
class PageList:
    results: tuple[Page, ...]
    total: int


@dataclass(frozen=True)
class TriggerResult:
    http_code: int
    job_path: str


def trigger(job_path: str) -> TriggerResult:
    """Start a build."""
    return TriggerResult(201, job_path)


def status(result: TriggerResult) -> str:
    """Report the job of a started build."""
    return f"{result.job_path}: {result.http_code}"


@dataclass(frozen=True)
class Owner:
    name: str
    email: str | None = None


@dataclass(frozen=True)
class Repo:
    name: Annotated[str, "The repository name"]
    owner: Owner
    topics: list[str] = field(default_factory=list)
    slug: str = field(init=False)
    _token: str = "hidden"

    def __post_init__(self) -> None:
        object.__setattr__(self, "slug", f"{self.owner.name}/{self.name}")


@dataclass(frozen=True)
class Checked:
    value: int

    def __post_init__(self) -> None:
        if self.value < 0:
            raise ValueError(f"value must be >= 0, got {self.value}")


@dataclass(frozen=True)
class NeedsSecret:
    name: str
    _secret: str


@dataclass(frozen=True)
class Unresolved:
    name: str
    later: NotDefinedAnywhere  # noqa: F821 - deliberately unresolvable


def describe(value: Status | TriggerResult) -> str:
    """Describe whichever record fits first."""
    return type(value).__name__


def maybe(value: TriggerResult | None = None) -> Any:
    """Optional record."""
    return value


def many(
    items: list[TriggerResult],
    pair: tuple[TriggerResult, Status],
    rest: tuple[TriggerResult, ...],
    unique: frozenset[TriggerResult],
    by_name: dict[str, TriggerResult],
) -> Any:
    """Records inside containers."""
    return items, pair, rest, unique, by_name


def repo_tool(repo: Repo) -> Repo:
    """Nested record fields."""
    return repo


def checked(value: Checked) -> Checked:
    """Constructor validation."""
    return value


def secretive(value: NeedsSecret) -> Any:
    """A required private field cannot be rebuilt."""
    return value


def unresolved(value: Missing) -> Any:  # noqa: F821 - deliberately unresolvable
    """The annotation cannot be resolved."""
    return value


def loose(value, *rest, **named):  # unannotated on purpose
    """No annotations at all."""
    return value, rest, named


def traced(fn: Any) -> Any:
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return call


@traced
def wrapped_status(result: TriggerResult) -> str:
    """Decorated with functools.wraps."""
    return status(result)
