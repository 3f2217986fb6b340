"""The SDK's declarations take the lists the spec's examples pass, for type checkers too."""

from __future__ import annotations

import dataclasses

import vis_core.extension as vis

COLLECTIONS = {
    vis.Extension: (
        "symbols", "slash_commands", "op_hooks", "network_filters", "providers", "env",
        "grants", "settings", "mcp_servers",
    ),
    vis.OpHook: ("ops",),
    vis.Setting: ("scopes",),
}  # fmt: skip


def test_collection_arguments_are_declared_as_sequences_so_a_list_type_checks() -> None:
    """Declared as tuples, an author's editor marked every ``symbols=[...]`` an error
    (pyright: "list[Symbol]" is not assignable to "tuple[Any, ...]"), though Vis takes lists."""
    for declaration, names in COLLECTIONS.items():
        fields = {f.name: str(f.type) for f in dataclasses.fields(declaration)}
        for name in names:
            assert fields[name].startswith("Sequence["), (declaration.__name__, name, fields[name])


def test_lists_are_kept_as_tuples() -> None:
    hook = vis.OpHook(["shell"], lambda call: None)
    setting = vis.Setting(id="x_flag", label="Flag", default=True, scopes=["global", "project"])
    assert hook.ops == ("shell",)
    assert setting.scopes == (vis.SettingScope.GLOBAL, vis.SettingScope.PROJECT)
