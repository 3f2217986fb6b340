"""Build metadata globals for extension entry files and python_execution."""

from __future__ import annotations

import re

import vis_core
from vis_core.extension import metadata


def test_build_metadata_has_the_four_globals() -> None:
    data = metadata.build_metadata()
    assert tuple(data) == metadata.METADATA_NAMES
    assert data["VIS_VERSION"] == vis_core.__version__
    assert data["VIS_PYTHON_RUNTIME_VERSION"] == vis_core.__version__
    assert data["VIS_PYTHON_SDK_VERSION"] == "0.1.0"  # the installed vis-agent distribution
    sha = data["VIS_SHA_RELEASE"]
    assert sha is None or re.fullmatch(r"[0-9a-f]{40}(-dirty)?", sha)


def test_build_metadata_returns_a_fresh_dict() -> None:
    first = metadata.build_metadata()
    first["VIS_VERSION"] = "changed"
    assert metadata.build_metadata()["VIS_VERSION"] == vis_core.__version__


def test_checkout_commit_is_reported() -> None:
    # this test suite runs from the git checkout, so the commit is known
    assert metadata._release_sha() is not None
