"""An extension's declaration as data: what the registration worker reports, the host rebuilds.

The registration worker loads an entry file and describes the ``Extension`` it registered as
JSON-safe data (:func:`describe`): settings with their fields, slash commands, op hooks,
grants, MCP servers, network filters, model providers, a text prompt, and each tool with its
Activity and its contract computed there. Functions (a callable prompt, activation, ctx, a
setting's ``on_change``, a command's ``run``, a hook's ``fn``, a tool, an Activity's
``render``, a provider's ``stream``, a network filter's) are reported as present only. The
host rebuilds the same declaration objects (:func:`rebuild`) with :class:`WorkerCallback`
markers in their place: those functions run only in the session's extension worker, so the
host reads every declaration without running the extension's code.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

from vis_core.contracts.specs import ToolSpec
from vis_core.extension.declarations import Extension, OpHook, Setting, SlashCommand
from vis_core.model.activity import Activity, SymbolTag
from vis_core.tools.registry import HostTool


class WorkerCallback:
    """Stands on the host for a function of an extension that runs only in its worker; calling
    it is a bug of Vis (a caller that should have asked the worker), said as such."""

    __slots__ = ("key", "kind", "owner")

    def __init__(self, owner: str, kind: str, key: str = "") -> None:
        self.owner = owner
        self.kind = kind
        self.key = key

    def _what(self) -> str:
        which = f" {self.key!r}" if self.key else ""
        return f"the {self.kind}{which} of extension {self.owner!r}"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            f"{self._what()} runs only in the extension's worker process, but the Vis host "
            "called it; this is a bug of Vis, please report it"
        )

    def __repr__(self) -> str:
        return f"<{self._what()}, in its worker>"


class StateOnlyCtx(WorkerCallback):
    """Stands for a ``ctx`` declared with ``ctx_state_key``, with ``when_empty``: its answer
    against an empty ``vis.state``, taken when the extension loaded."""

    __slots__ = ("when_empty",)

    def __init__(self, owner: str, when_empty: dict[str, Any]) -> None:
        super().__init__(owner, "ctx callback")
        self.when_empty = when_empty


# -- the worker side -------------------------------------------------------------------------


def describe(
    extension: Extension,
    tools: list[HostTool],
    ctx_when_empty: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """``extension`` and its ``tools`` (from ``symbol_host_tools``) as JSON-safe data;
    ``ctx_when_empty``: what its state-only ``ctx`` answered against an empty ``vis.state``."""
    from vis_core.contracts.build import callable_spec

    prompt = extension.prompt
    return {
        "name": extension.name,
        "description": extension.description,
        "alias": extension.alias,
        "kind": extension.kind,
        "version": extension.version,
        "env": list(extension.env),
        "prompt": prompt if isinstance(prompt, str) else None,
        "prompt_callable": prompt is not None and not isinstance(prompt, str),
        "activation": extension.activation is not None,
        "ctx": extension.ctx is not None,
        "ctx_state_key": extension.ctx_state_key,
        "ctx_when_empty": ctx_when_empty,
        "settings": [_setting(setting) for setting in extension.settings],
        "commands": [
            {"name": c.name, "doc": c.doc, "usage": c.usage, "saveable": c.saveable}
            for c in extension.slash_commands
        ],
        "hooks": [{"ops": list(h.ops), "phase": str(h.phase)} for h in extension.op_hooks],
        "grants": [
            {"path": os.fspath(g.path), "mode": str(g.mode), "reason": g.reason}
            for g in extension.grants
        ],
        "mcp_servers": [{"name": s.name, "config": dict(s.config)} for s in extension.mcp_servers],
        "network_filters": [
            {"name": f.name, "description": f.description, "response": f.response is not None}
            for f in extension.network_filters
        ],
        "providers": [
            {
                "name": p.name,
                "description": p.description,
                "models": [dataclasses.asdict(m) for m in p.models],
            }
            for p in extension.providers
        ],
        "tools": [
            {
                "name": tool.name,
                "tag": tool.tag.value,
                "is_hidden": tool.is_hidden,
                "activity": _activity(tool.activity),
                "spec": callable_spec(tool.fn, name=tool.name, tag=tool.tag).to_contract(),
            }
            for tool in tools
        ],
    }


def _setting(setting: Setting[Any]) -> dict[str, Any]:
    return {
        "id": setting.id,
        "label": setting.label,
        "default": setting.default,
        "type": str(setting.type),
        "choices": list(setting.choices),
        "parent": setting.parent,
        "is_secret": setting.is_secret,
        "scopes": [str(scope) for scope in setting.scopes],
        "description": setting.description,
        "on_change": setting.on_change is not None,
    }


def _ctx_marker(owner: str, data: dict[str, Any]) -> WorkerCallback | None:
    if not data.get("ctx"):
        return None
    when_empty = data.get("ctx_when_empty")
    if data.get("ctx_state_key") and isinstance(when_empty, dict):
        return StateOnlyCtx(owner, when_empty)
    return WorkerCallback(owner, "ctx callback")


def _activity(activity: Activity | None) -> dict[str, Any] | None:
    if activity is None:
        return None
    return {
        "label": activity.label,
        "presenter": activity.presenter,
        "show_start": activity.show_start,
        "render": activity.render is not None,
    }


# -- the host side ---------------------------------------------------------------------------


def rebuild(data: dict[str, Any]) -> tuple[Extension, tuple[HostTool, ...]]:
    """The declaration and tools ``data`` describes, with :class:`WorkerCallback` markers."""
    from vis_core.extension.grants import Grant
    from vis_core.extension.mcp_servers import McpServer
    from vis_core.extension.network import NetworkFilter
    from vis_core.extension.providers import Provider, ProviderModel

    owner = str(data["name"])

    def marker(kind: str, key: str = "") -> WorkerCallback:
        return WorkerCallback(owner, kind, key)

    prompt: Any = data.get("prompt")
    if prompt is None and data.get("prompt_callable"):
        prompt = marker("prompt")
    settings = tuple(
        Setting(
            id=s["id"],
            label=s["label"],
            default=s["default"],
            type=s["type"],
            choices=tuple(s["choices"]),
            parent=s["parent"],
            is_secret=bool(s["is_secret"]),
            scopes=tuple(s["scopes"]),
            on_change=marker("on_change callback", s["id"]) if s["on_change"] else None,
            description=s["description"],
        )
        for s in data.get("settings", ())
    )
    extension = Extension(
        name=owner,
        description=data["description"],
        alias=data.get("alias"),
        prompt=prompt,
        activation=marker("activation callback") if data.get("activation") else None,
        ctx=_ctx_marker(owner, data),
        ctx_state_key=data.get("ctx_state_key") if data.get("ctx") else None,
        slash_commands=tuple(
            SlashCommand(
                name=c["name"],
                run=marker("slash command", c["name"]),
                doc=c["doc"],
                usage=c["usage"],
                saveable=bool(c["saveable"]),
            )
            for c in data.get("commands", ())
        ),
        op_hooks=tuple(
            OpHook(ops=tuple(h["ops"]), fn=marker("op hook", str(index)), phase=h["phase"])
            for index, h in enumerate(data.get("hooks", ()))
        ),
        env=tuple(data.get("env", ())),
        grants=tuple(
            Grant(g["path"], g["mode"], reason=g["reason"]) for g in data.get("grants", ())
        ),
        kind=data.get("kind"),
        version=data.get("version"),
        settings=settings,
        mcp_servers=tuple(
            McpServer(m["name"], dict(m["config"])) for m in data.get("mcp_servers", ())
        ),
        network_filters=tuple(
            NetworkFilter(
                f["name"],
                marker("network filter", f["name"]),
                response=marker("network filter", f["name"]) if f["response"] else None,
                description=f["description"],
            )
            for f in data.get("network_filters", ())
        ),
        providers=tuple(
            Provider(
                p["name"],
                tuple(ProviderModel(**m) for m in p["models"]),
                marker("provider stream", p["name"]),
                description=p["description"],
            )
            for p in data.get("providers", ())
        ),
    )
    tools = tuple(_tool(owner, item, marker) for item in data.get("tools", ()))
    return extension, tools


def _tool(owner: str, item: dict[str, Any], marker: Any) -> HostTool:
    name = str(item["name"])
    activity = None
    raw = item.get("activity")
    if raw is not None:
        activity = Activity(
            raw["label"],
            presenter=raw["presenter"],
            render=marker("Activity render callback", name) if raw["render"] else None,
            show_start=bool(raw["show_start"]),
        )
    return HostTool(
        name=name,
        fn=marker("tool", name),
        tag=SymbolTag(item["tag"]),
        activity=activity,
        owner=owner,
        is_hidden=bool(item["is_hidden"]),
        spec=ToolSpec.from_contract(item["spec"]),
    )
