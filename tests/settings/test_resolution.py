"""Scope resolution: every order of levels, inheritance, False vs missing, disallowed scopes."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from vis_core.paths import TrustStore, VisPaths
from vis_core.settings.service import SettingsService
from vis_core.settings.values import Source
from vis_core.store import Store

LEVELS = (Source.GLOBAL, Source.PROJECT, Source.GROUP, Source.SESSION, Source.COMMAND_LINE)
VALUES = {
    Source.GLOBAL: "10",
    Source.PROJECT: "25",
    Source.GROUP: "100",
    Source.SESSION: "200",
    Source.COMMAND_LINE: "50",
}


def _service(workspace: Path, toggles: tuple[str, ...] = ()) -> tuple[SettingsService, str]:
    paths = VisPaths.from_env().ensure()
    TrustStore(paths).trust(workspace)  # the project's files as they are now count
    store = Store(paths.db_file)
    session = store.create_session(workspace, workspace)
    store.set_group(session.id, "team")
    service = SettingsService(paths=paths, store=store, project_root=workspace, toggles=toggles)
    return service, session.id


@pytest.mark.parametrize(
    "present",
    [combo for n in range(len(LEVELS) + 1) for combo in itertools.combinations(LEVELS, n)],
    ids=lambda combo: "+".join(s.name.lower() for s in combo) or "none",
)
async def test_most_specific_level_wins(workspace: Path, present: tuple[Source, ...]) -> None:
    toggles = (
        (f"max_iterations={VALUES[Source.COMMAND_LINE]}",)
        if (Source.COMMAND_LINE in present)
        else ()
    )
    service, session = _service(workspace, toggles)
    for level in present:
        if level is not Source.COMMAND_LINE:
            await service.set("max_iterations", VALUES[level], level.value, session_id=session)
    resolution = service.resolve("max_iterations", session)
    expected = present[-1] if present else Source.DEFAULT
    assert resolution.source is expected
    assert resolution.value == (VALUES[expected] if present else "50")
    assert set(resolution.layers) == set(present)


async def test_false_does_not_inherit_but_a_missing_value_does(workspace: Path) -> None:
    service, session = _service(workspace)
    await service.set("jail", True, "global")
    await service.set("jail", False, "session", session_id=session)
    assert service.resolve("jail", session).value is False
    assert service.resolve("jail", session).source is Source.SESSION
    await service.reset("jail", "session", session_id=session)
    assert service.resolve("jail", session).value is True
    assert service.resolve("jail", session).source is Source.GLOBAL
    assert service.resolve("jail", None).value is True  # no session: project level


@pytest.mark.usefixtures("jail_off")  # the global value the other group falls back to
async def test_group_values_follow_the_session_group(workspace: Path) -> None:
    service, session = _service(workspace)
    await service.set("jail", True, "group", session_id=session)
    assert service.value("jail", session) is True
    await service.move_to_group(session, "other")
    assert service.value("jail", session) is False
    await service.move_to_group(session, "team")
    assert service.value("jail", session) is True


async def test_disallowed_scopes_are_refused_on_save_and_ignored_on_read(workspace: Path) -> None:
    (workspace / "vis.yml").write_text("toggles:\n  theme: nord\n  jail: true\n")
    service, session = _service(workspace)
    with pytest.raises(ValueError, match="setting 'theme' can be saved only at 'global' scope"):
        await service.set("theme", "nord", "project")
    with pytest.raises(ValueError, match="'theme' can be saved only at 'global' scope"):
        await service.set("theme", "nord", "session", session_id=session)
    resolution = service.resolve("theme", session)
    assert resolution.value == "textual-dark" and resolution.source is Source.DEFAULT
    assert any("project value of setting 'theme' is ignored" in i for i in resolution.ignored)
    assert service.value("jail", session) is True


async def test_global_values_keep_the_rest_of_config_toml(workspace: Path) -> None:
    paths = VisPaths.from_env().ensure()
    paths.config_file.write_text('model = "openai/gpt-5"\n[providers.local]\nkind = "openai"\n')
    service, _ = _service(workspace)
    await service.set("jail", True, "global")
    text = paths.config_file.read_text()
    assert 'model = "openai/gpt-5"' in text and "[providers.local]" in text
    assert "jail = true" in text
    await service.reset("jail", "global")
    assert "jail" not in paths.config_file.read_text()


async def test_project_saves_go_to_vis_settings_toml_over_vis_yml(workspace: Path) -> None:
    (workspace / "vis.yml").write_text("toggles:\n  jail: true\n")
    service, _ = _service(workspace)
    await service.set("jail", False, "project")
    assert "jail = false" in (workspace / ".vis" / "settings.toml").read_text()
    assert service.value("jail") is False
    await service.reset("jail", "project")
    assert service.value("jail") is True  # the vis.yml value shows again
    assert "jail: true" in (workspace / "vis.yml").read_text()


async def test_a_broken_config_toml_is_never_overwritten(workspace: Path) -> None:
    paths = VisPaths.from_env().ensure()
    paths.config_file.write_text("this is = = not toml")
    service, _ = _service(workspace)
    with pytest.raises(ValueError, match="config.toml is not valid TOML"):
        await service.set("jail", True, "global")
    assert paths.config_file.read_text() == "this is = = not toml"
