"""``env`` and ``headers`` values: ``${VAR}`` from the environment, a whole-value ``!command``."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping
from pathlib import Path

from vis_core.system.redaction import key_name

COMMAND_TIMEOUT = 30.0
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class ExpansionError(ValueError):
    """A value could not be expanded (unset variable, failing command)."""


def expand(
    value: str, what: str, environ: Mapping[str, str] | None = None, cwd: Path | None = None
) -> str:
    """``!command`` (the whole value) runs in bash (in ``cwd``, with ``environ``) and its trimmed
    output is the value; otherwise each ``${VAR}`` is replaced by the variable (an unset one is
    an error)."""
    env = os.environ if environ is None else environ
    if value.startswith("!"):
        command = value[1:].strip()
        if not command:
            raise ExpansionError(f"{what}: '!' must be followed by a command")
        try:
            done = subprocess.run(
                ["bash", "-c", command],
                capture_output=True,
                text=True,
                timeout=COMMAND_TIMEOUT,
                env=dict(env),
                cwd=cwd,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            raise ExpansionError(
                f"{what}: the command did not finish in {COMMAND_TIMEOUT:.0f} s"
            ) from None
        except OSError as exc:
            raise ExpansionError(f"{what}: cannot run the command ({exc})") from None
        if done.returncode != 0:
            detail = done.stderr.strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
            raise ExpansionError(f"{what}: the command failed: {detail[0]}")
        return done.stdout.strip()

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in env:
            raise ExpansionError(f"{what}: the environment variable {name} is not set")
        return env[name]

    return _VAR.sub(replace, value)


CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})


def expanded_keys(
    pairs: tuple[tuple[str, str], ...],
    expanded: Mapping[str, str],
    *,
    all_keys: bool,
    environ: Mapping[str, str] | None = None,
) -> list[str]:
    """The keys in ``expanded``, for the redactor: each ``${VAR}``'s value and each
    ``!command``'s output, of every entry (``all_keys``: headers) or of entries named like a
    key (``GITHUB_TOKEN``: env). An entry named like a key (a header too: ``X-Api-Key``,
    ``Authorization``, ``Cookie``) is one whole, also when written in the file as it is
    (``MY_API_KEY=sk-...``), and so is a header's credential after its scheme (``Bearer``)."""
    env = os.environ if environ is None else environ
    found: list[str] = []
    for key, raw in pairs:
        named = key_name(key) or (
            all_keys and (key.lower() in CREDENTIAL_HEADERS or key_name(key.replace("-", "_")))
        )
        if not (all_keys or named):
            continue
        if raw.startswith("!") or named:
            value = expanded.get(key, "")
            found.append(value)
            if all_keys and named:
                found.append(value.partition(" ")[2].strip())
        if not raw.startswith("!"):
            found.extend(env.get(name, "") for name in _VAR.findall(raw))
    return [value for value in dict.fromkeys(found) if value]


def expand_map(
    pairs: tuple[tuple[str, str], ...],
    what: str,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> dict[str, str]:
    return {key: expand(value, f"{what} {key}", environ, cwd) for key, value in pairs}
