"""Figure: the size of the system prompt (and tool declarations) with instructions and skills.

Through the real Host with the two bundled extensions (git, todo), measured as ``/context``
estimates tokens (characters / 4):
  - bare: no instruction file, no skill;
  - full: a 40-line AGENTS.md at the project root and three skills (one in the config folder,
    two in the trusted project's ``.vis/skills/`` and ``.claude/skills/``).
Issue 26 asks the full one to stay within 2,000 tokens.
Run: ``.venv/bin/python bench/prompt_size.py``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path

BUDGET = 2000

AGENTS_LINES = [
    "# Project notes",
    "",
    "A web service in Python 3.11 that turns invoices into ledger entries.",
    "",
    "## Commands",
    "- install: `python -m venv .venv && .venv/bin/pip install -e '.[dev]'`",
    "- all tests: `.venv/bin/pytest -q`",
    "- one test: `.venv/bin/pytest -q tests/test_ledger.py::test_totals`",
    "- lint: `.venv/bin/ruff check . && .venv/bin/ruff format --check .`",
    "- types: `.venv/bin/pyright src`",
    "- run locally: `.venv/bin/invoices serve --port 8080`",
    "",
    "## Layout",
    "- `src/invoices/` the service: `api/` routes, `ledger/` the bookkeeping, `store/` SQL",
    "- `tests/` mirrors `src/`; fixtures in `tests/fixtures/`",
    "- `docs/` the user guide (MkDocs)",
    "- `migrations/` Alembic migrations, one per schema change",
    "",
    "## Conventions",
    "- Money is `Decimal`, never float; amounts carry their currency.",
    "- Every public function has type hints and a one-line docstring.",
    "- Errors raised to the API are `InvoiceError` subclasses with a user message.",
    "- No network calls in tests: use the recorded responses in `tests/fixtures/http/`.",
    "- SQL lives in `store/queries.py`; no SQL strings elsewhere.",
    "- Dates are UTC `datetime` with tzinfo; format with `isoformat()`.",
    "- New settings go in `config.py` with a default and a line in `docs/settings.md`.",
    "",
    "## Before a change is done",
    "- tests, lint and types pass;",
    "- a migration exists for any model change and it downgrades cleanly;",
    "- `CHANGELOG.md` has a line under Unreleased;",
    "- the user guide says what changed for users.",
    "",
    "## Do not",
    "- edit files under `migrations/` that are already released;",
    "- commit `.env` or anything under `var/`;",
    "- add dependencies without asking.",
    "",
    "Ask when a request is ambiguous about money rounding.",
    "Prefer small commits, one concern each.",
]

SKILLS = {
    "release": "Cut a release: bump the version, tag, build and upload the package.",
    "db-migration": "Write an Alembic migration for a model change and test its downgrade.",
    "pdf-invoices": "Render an invoice as PDF with the bundled template and check the layout.",
}


def _skill(folder: Path, name: str, description: str) -> None:
    folder.mkdir(parents=True)
    body = "\n".join(f"{n}. Step {n} of {name}." for n in range(1, 30))
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n\n{body}\n"
    )


def _size(request: object) -> tuple[int, int]:
    from vis_core.providers.common import estimate_tokens

    system = len(request.system)  # type: ignore[attr-defined]
    tools = sum(
        len(t.name) + len(t.description) + len(json.dumps(t.parameters))
        for t in request.tools  # type: ignore[attr-defined]
    )
    return estimate_tokens(system), estimate_tokens(tools)


async def _measure(workspace: Path) -> tuple[int, int, list[str]]:
    from vis_core.host import Host, HostOptions

    host = await Host.open(HostOptions(workspace=workspace, provider="scripted"))
    try:
        session = await host.new_session()
        request = session.build_request()
        names = [ext.name for ext in host.catalog.loaded.enabled]
    finally:
        await host.close()
    system, tools = _size(request)
    return system, tools, names


async def main() -> None:
    home = Path(tempfile.mkdtemp(prefix="vis-bench-"))
    os.environ["VIS_HOME"] = str(home)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from vis_core.paths import TrustStore, VisPaths

    bare = home / "bare"
    bare.mkdir()
    full = home / "full"
    (full / ".vis").mkdir(parents=True)
    assert len(AGENTS_LINES) == 40
    (full / "AGENTS.md").write_text("\n".join(AGENTS_LINES) + "\n")
    places = [home / "skills", full / ".vis" / "skills", full / ".claude" / "skills"]
    for place, (name, description) in zip(places, SKILLS.items(), strict=True):
        _skill(place / name, name, description)
    TrustStore(VisPaths.from_env()).trust(full)

    rows = [
        ("bare", await _measure(bare)),
        ("AGENTS.md (40 lines) + 3 skills", await _measure(full)),
    ]
    print(f"extensions: {', '.join(rows[0][1][2])}")
    for label, (system, tools, _) in rows:
        total = system + tools
        print(
            f"{label:34s} system prompt ~{system:,} tokens + tool declarations ~{tools:,} "
            f"= ~{total:,} tokens"
        )
    full_total = rows[1][1][0] + rows[1][1][1]
    verdict = "within" if full_total <= BUDGET else "OVER"
    print(f"full prompt ~{full_total:,} tokens: {verdict} the {BUDGET:,}-token budget")


if __name__ == "__main__":
    asyncio.run(main())
