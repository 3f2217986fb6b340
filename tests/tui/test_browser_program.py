"""A link opens in the person's browser by a program found outside the checkout: Python's
``webbrowser`` ran ``xdg-settings`` and ``xdg-open`` by name, so a ``PATH`` with an empty or
``.`` entry ran a checkout's copies."""

from __future__ import annotations

from pathlib import Path

import pytest

from vis_core.system.browser import browser_command

from .support import started, until, vis_app, write_script

PLANTED = ("xdg-settings", "xdg-open", "gio", "x-www-browser", "firefox")


def desktop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path_first: str = "") -> Path:
    """A display, no ``$BROWSER``, and a folder on ``PATH`` (after ``path_first``) whose
    ``xdg-open`` writes the address it was given to the file returned."""
    opened = tmp_path / "opened"
    tools = tmp_path / "bin"
    tools.mkdir()
    opener = tools / "xdg-open"
    opener.write_text(f'#!/bin/sh\necho "$*" >> "{opened}"\n', encoding="utf-8")
    opener.chmod(0o755)
    monkeypatch.setenv("PATH", f"{path_first}:{tools}:{Path('/usr/bin')}:{Path('/bin')}")
    monkeypatch.setenv("DISPLAY", ":99")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("BROWSER", raising=False)
    return opened


def _written(path: Path) -> str:
    return path.read_text(encoding="utf-8") if path.exists() else ""


@pytest.mark.parametrize("entry", ["", "."], ids=["empty-entry", "dot"])
async def test_a_link_never_runs_a_checkouts_browser_opener(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entry: str
) -> None:
    planted = tmp_path / "pwned"
    for name in PLANTED:
        fake = workspace / name
        fake.write_text(f'#!/bin/sh\necho "$0 $*" >> "{planted}"\n', encoding="utf-8")
        fake.chmod(0o755)
    monkeypatch.chdir(workspace)
    opened = desktop(tmp_path, monkeypatch, path_first=entry)
    app = vis_app(workspace, write_script(tmp_path, [{"text": "ok"}]))
    async with app.run_test(size=(110, 40)) as pilot:
        await started(app, pilot)
        app.open_url("https://example.com/docs")
        await until(pilot, lambda: _written(opened).endswith("\n"), seen=lambda: _written(planted))
    assert _written(opened) == "https://example.com/docs\n"
    assert not planted.exists(), planted.read_text(encoding="utf-8")


def test_browser_is_the_persons_choice_found_outside_the_workspace(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(workspace)
    desktop(tmp_path, monkeypatch)
    browser = tmp_path / "bin" / "vis-test-browser"
    browser.write_text("#!/bin/sh\n", encoding="utf-8")
    browser.chmod(0o755)
    (workspace / "vis-test-checkout-browser").write_text("#!/bin/sh\n", encoding="utf-8")
    (workspace / "vis-test-checkout-browser").chmod(0o755)
    url = "https://example.com/"
    env = {"DISPLAY": ":99"}
    assert browser_command(url, (workspace,), {**env, "BROWSER": "vis-test-browser --new-tab"}) == [
        str(browser),
        "--new-tab",
        url,
    ]
    assert browser_command(url, (workspace,), {**env, "BROWSER": "vis-test-browser -u %s -x"}) == [
        str(browser),
        "-u",
        url,
        "-x",
    ]
    # a $BROWSER only the checkout holds: the desktop's opener instead
    assert browser_command(url, (workspace,), {**env, "BROWSER": "vis-test-checkout-browser"}) == [
        str(tmp_path / "bin" / "xdg-open"),
        url,
    ]
    assert browser_command(url, (workspace,), {}) is None  # no display: over SSH
