"""How Vis was started; light to import, so the app can start before the Host loads."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vis_core.model.channel import Channel


@dataclass(frozen=True)
class HostOptions:
    """How Vis was started: workspace, model choice and command-line setting toggles."""

    workspace: Path
    model: str | None = None
    provider: str | None = None
    script: Path | None = None
    toggles: tuple[str, ...] = ()
    channel: Channel = Channel.TUI
    allow_approve: bool = False  # `vis run --allow-approve`: the model may approve its draft

    @classmethod
    def from_args(cls, args: Any, workspace: Path, channel: Channel) -> HostOptions:
        """The options the command line ``args`` (argparse's namespace) gives, for ``channel``."""
        return cls(
            workspace=workspace,
            model=args.model,
            provider=args.provider,
            script=args.script.resolve() if args.script else None,
            toggles=tuple(args.toggles),
            channel=channel,
            allow_approve=bool(getattr(args, "allow_approve", False)),
        )
