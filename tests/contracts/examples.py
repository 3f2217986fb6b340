"""Fixtures from the Extension API reference: reports, greeter, Status, PageList, TriggerResult."""

from __future__ import annotations

from dataclasses import dataclass

from vis_core.contracts.sequence import sequence
from vis_core.extension.symbols import method
from vis_core.model.activity import Activity


def report() -> str:
    """Prepare a report with the selected level of detail."""
    return "Summary"


REPORT_ACTIVITY = Activity(label="Prepare report", show_start=False)


@dataclass(frozen=True)
class Results:
    greeting: str
    loud: bool


class Greeter:
    @method(activity=Activity(label="Generate greeting", show_start=False))
    def hello(self, name: str, /, *, loud: bool = False) -> Results:
        """Generate greeting text; it never sends messages."""
        text = f"Hello, {name}"
        return Results(text.upper() if loud else text, loud)


@dataclass(frozen=True)
class Status:
    env: str
    phases: tuple[int, ...] = ()

    @property
    def next_phase(self) -> int:
        return len(self.phases) + 1

    def __str__(self) -> str:
        return f"{self.env}: next phase {self.next_phase}"


def status_of(env: str) -> Status:
    """Report the deployment status of one environment."""
    return Status(env)


@dataclass(frozen=True, slots=True)
class Page:
    title: str


@sequence(field="results")
@dataclass(frozen=True, slots=True)
class PageList:
    results: tuple[Page, ...]
    total: int


def search_pages(query: str, limit: int = 20) -> PageList:
    """Search wiki pages by title words."""
    return PageList((Page(query),), 1)


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
