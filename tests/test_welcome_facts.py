"""What the welcome header says before the Host opens is what the Host says once it is open."""

from __future__ import annotations

from pathlib import Path

import pytest

from vis_core import welcome_probe
from vis_core.host import Host
from vis_core.host_options import HostOptions
from vis_core.model.channel import Channel
from vis_core.paths import TrustStore, VisPaths
from vis_core.welcome import WelcomeFacts, welcome_facts

LOCAL = """\
[providers.local]
kind = "openai"
base_url = "http://127.0.0.1:9/v1"
api_key_env = ""
"""


async def _host_facts(options: HostOptions) -> WelcomeFacts:
    host = await Host.open(options)
    try:
        session = await host.new_session()
        model = host.models.label if not host.models.problem else ""
        jail = host.space.jail_mode(session.id)
        return WelcomeFacts(model, host.space.trusted, jail, host.space.trust_changed)
    finally:
        await host.close()


@pytest.mark.parametrize(
    ("config", "project", "trusted", "options", "model"),
    [
        ('model = "local/global-model"\n' + LOCAL, None, False, {}, "local/global-model"),
        (
            'model = "local/global-model"\njail = false\n' + LOCAL,
            None,
            False,
            {},
            "local/global-model",
        ),
        ("", None, False, {}, ""),  # no model: the header says so
        ('model = "nowhere"\n', None, False, {}, ""),  # a bad value: no model either
        (
            'model = "local/global-model"\n' + LOCAL,
            "local/project-model",
            True,
            {},
            "local/project-model",
        ),
        (
            'model = "local/global-model"\n' + LOCAL,
            "local/project-model",
            False,
            {},
            "local/global-model",
        ),
        (LOCAL, None, False, {"provider": "scripted", "script": Path("s.json")}, "scripted/script"),
        (
            LOCAL,
            None,
            False,
            {"model": "local/flag-model", "toggles": ("jail=false",)},
            "local/flag-model",
        ),
    ],
)
async def test_the_files_say_what_the_host_says(
    workspace: Path,
    config: str,
    project: str | None,
    trusted: bool,
    options: dict[str, object],
    model: str,
) -> None:
    paths = VisPaths.from_env().ensure()
    paths.config_file.write_text(config, encoding="utf-8")
    if project is not None:
        (workspace / "vis.yml").write_text(
            f"toggles:\n  jail: false\n  model: {project}\n", encoding="utf-8"
        )
        if trusted:
            TrustStore(paths).trust(workspace)
    host_options = HostOptions(workspace=workspace, **options)  # type: ignore[arg-type]
    early = welcome_facts(
        workspace,
        provider=host_options.provider,
        model=host_options.model,
        toggles=host_options.toggles,
    )
    assert early == await _host_facts(host_options)
    assert (early.model, early.trusted) == (model, trusted)
    # what `vis`'s child process reads for the header, as the app gets it
    probe = welcome_probe.start(
        workspace,
        provider=host_options.provider,
        model=host_options.model,
        toggles=host_options.toggles,
        channel=Channel.TUI,
    )
    assert probe is not None and welcome_probe.read(probe) == early


async def test_a_lapsed_trust_is_said_before_the_host_opens(workspace: Path) -> None:
    """Trusted once, then a control file changed: the header's facts (the app's own and its
    probe's) say the trust lapsed, as the Host does."""
    paths = VisPaths.from_env().ensure()
    (workspace / "vis.yml").write_text("toggles:\n  jail: false\n", encoding="utf-8")
    TrustStore(paths).trust(workspace)
    (workspace / "vis.yml").write_text("toggles:\n  jail: true\n", encoding="utf-8")
    early = welcome_facts(workspace)
    assert (early.trusted, early.lapsed) == (False, True)
    assert early == await _host_facts(HostOptions(workspace=workspace))
    probe = welcome_probe.start(
        workspace, provider=None, model=None, toggles=(), channel=Channel.TUI
    )
    assert probe is not None and welcome_probe.read(probe) == early


def test_a_probe_that_says_nothing_usable_leaves_the_app_to_read_the_facts() -> None:
    """A child that failed (no JSON, or another shape) gives None: the app reads them itself."""
    import subprocess
    import sys

    for said in ("not json", '{"model": "m"}', "[1, 2]"):
        probe = subprocess.Popen([sys.executable, "-c", f"print({said!r})"], stdout=subprocess.PIPE)
        assert welcome_probe.read(probe) is None
