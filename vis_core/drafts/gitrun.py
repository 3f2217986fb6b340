"""Vis's own git calls for drafts, through the hardened runner (vis_core/system/git.py)."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

from vis_core.drafts.errors import DraftError
from vis_core.system.git import run_git

# Vis's commits: never signed by a program the repository names, an identity when none is set.
COMMIT_CONFIG = ("-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false")
FALLBACK_IDENTITY = ("-c", "user.name=Vis", "-c", "user.email=vis@localhost")


def git(
    args: Sequence[str],
    cwd: Path,
    *,
    check: bool = True,
    feed: bytes | None = None,
    environment: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    done = run_git(["--literal-pathspecs", *args], cwd, feed=feed, environment=environment)
    if check and done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip() or f"exit {done.returncode}"
        raise DraftError(f"git {args[0]} failed in {cwd}: {message}")
    return done


def text(args: Sequence[str], cwd: Path) -> str:
    return git(args, cwd).stdout.decode("utf-8", "surrogateescape").strip()


def paths(args: Sequence[str], cwd: Path) -> list[str]:
    """The NUL-separated paths ``git args -z`` prints."""
    out = git(args, cwd).stdout.decode("utf-8", "surrogateescape")
    return [p for p in out.split("\0") if p]


def commit_config(cwd: Path) -> list[str]:
    """``-c`` pairs for a commit Vis makes: unsigned; Vis's name when git knows none."""
    known = git(["config", "user.email"], cwd, check=False).returncode == 0
    return [*COMMIT_CONFIG, *(() if known else FALLBACK_IDENTITY)]
