"""`vis settings list` and `get` say a saved value they ignore, and why, as Settings does."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import vis as _vis

ACME = """import vis_core.extension as vis

vis.register_extension(vis.Extension(
    name="acme", description="Acme.",
    settings=[vis.Setting(
        id="acme_level", label="Level", type="enum", default="short", choices=["short", "full"],
    ), vis.Setting(id="acme_token", label="Token", type="string", default="", is_secret=True)],
))
"""


def _home(vis_home: Path) -> Path:
    (vis_home / "extensions").mkdir(parents=True, exist_ok=True)
    (vis_home / "extensions" / "acme.py").write_text(ACME, encoding="utf-8")
    config = vis_home / "config.toml"
    config.write_text(
        'max_iterations = "lots"\n\n[extensions.settings]\nacme_level = "huge"\n'
        'acme_token = "plaintextsecret99"\n',
        encoding="utf-8",
    )
    return config


def test_vis_settings_list_and_get_say_an_invalid_saved_value_is_ignored(
    workspace: Path, vis_home: Path
) -> None:
    config = _home(vis_home)
    listing = _vis("settings", "list", cwd=workspace, env_home=vis_home)
    assert listing.returncode == 0, listing.stderr
    lines = listing.stdout.splitlines()
    at = lines.index("max_iterations = 50  (default; Vis)")
    assert lines[at + 1] == (
        f"  # the global value is ignored: {config}: setting 'max_iterations' takes one of "
        "['10', '25', '50', '100', '200'], got 'lots'; no turn runs until it is fixed"
    )
    at = lines.index("acme_level = short  (default; acme)")
    assert lines[at + 1] == (
        f"  # the global value is ignored: {config}: setting 'acme_level' takes one of "
        "['short', 'full'], got 'huge'"
    )
    got = _vis("settings", "get", "acme_level", cwd=workspace, env_home=vis_home)
    assert got.returncode == 0 and got.stdout == "short\n", got.stderr
    assert "vis settings: warning: the global value is ignored: " in got.stderr
    assert "got 'huge'" in got.stderr
    rows = _vis("settings", "list", "--json", cwd=workspace, env_home=vis_home).stdout
    by_id = {row["id"]: row for row in map(json.loads, rows.splitlines())}
    assert "got 'lots'" in by_id["max_iterations"]["ignored"][0]
    assert by_id["model"]["ignored"] == []


def test_a_secret_written_into_config_toml_is_said_to_be_ignored(
    workspace: Path, vis_home: Path
) -> None:
    """A secret written into config.toml was ignored without a word: listed 'Not set', no
    'ignored' entry, the tool read nothing (found by a tester)."""
    _home(vis_home)
    listing = _vis("settings", "list", cwd=workspace, env_home=vis_home)
    lines = listing.stdout.splitlines()
    at = lines.index("acme_token = Not set  (default; acme)")
    assert lines[at + 1] == (
        "  # the global value of secret setting 'acme_token' is ignored: a secret is read only "
        "from Vis's secrets file: save it in Settings or with `vis settings set acme_token`"
    )
    assert "plaintextsecret99" not in listing.stdout + listing.stderr
