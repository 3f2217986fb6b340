"""The welcome header's facts, read by a child process that starts with the app.

The facts (:func:`vis_core.welcome.welcome_facts`: the model, trust, the jail mode) take the
settings, the trust list and a jailed ``true`` to find: done in the app's own process they
held up its first frames. The child reads them on the other core while the app imports and
paints, and says them as one JSON line. Light: the app's first frame imports this module.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from vis_core.model.channel import Channel
from vis_core.model.welcome import WelcomeFacts
from vis_core.system.child_process import python_argv

PROBE_TIMEOUT = 20.0  # seconds; the jail's own check may take PROBE_TIMEOUT of jail_check


def start(
    workspace: Path,
    *,
    provider: str | None,
    model: str | None,
    toggles: tuple[str, ...],
    channel: Channel,
) -> subprocess.Popen[bytes] | None:
    """Start the child that reads a new session's welcome facts; None if it cannot start."""
    args = {
        "workspace": str(workspace),
        "provider": provider,
        "model": model,
        "toggles": list(toggles),
        "channel": channel.value,
    }
    argv = python_argv(sys.executable, "vis_core.welcome_probe:main")
    try:
        return subprocess.Popen(
            [*argv, json.dumps(args)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=workspace,
        )
    except OSError:
        return None


def read(probe: subprocess.Popen[bytes]) -> WelcomeFacts | None:
    """The facts ``probe`` says (it is waited for), or None when it failed: the caller then
    reads them itself."""
    try:
        out, _ = probe.communicate(timeout=PROBE_TIMEOUT)
        said: Any = json.loads(out)
        jail_on, jail_line = said["jail"]
        return WelcomeFacts(
            str(said["model"]),
            bool(said["trusted"]),
            (bool(jail_on), jail_line),
            bool(said["lapsed"]),
        )
    except (subprocess.TimeoutExpired, ValueError, KeyError, TypeError):
        probe.kill()
        probe.wait()
        return None


def main() -> None:
    """The child: the facts for the JSON arguments in ``sys.argv[1]``, as one JSON line."""
    from vis_core import codegen_cache

    codegen_cache.install()
    from vis_core.welcome import welcome_facts

    args = json.loads(sys.argv[1])
    facts = welcome_facts(
        Path(args["workspace"]),
        provider=args["provider"],
        model=args["model"],
        toggles=tuple(args["toggles"]),
        channel=Channel(args["channel"]),
    )
    said = {"model": facts.model, "trusted": facts.trusted, "jail": facts.jail}
    print(json.dumps({**said, "lapsed": facts.lapsed}))
