"""A model's input limit when it is known, and the soft context budget derived from it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vis_core.providers.models import is_known_model, lookup_model

# The soft budget (``auto_compress_above``) by model family, else DEFAULT_SOFT_BUDGET; never more
# than 90 % of a known input limit; DEFAULT_SOFT_BUDGET when the limit is unknown.
FAMILY_BUDGETS = (("opus", 250_000), ("gpt", 230_000))
DEFAULT_SOFT_BUDGET = 200_000
LIMIT_SHARE = 0.9


def known_input_limit(provider: Any, model: str) -> int | None:
    """The hard input limit of ``model``: ``[models."p/m"] input_limit``, else what the provider
    reports, else the table of known models; None when none of them knows it.

    A provider answers through its own ``known_input_limit(model)`` when it has one (that is
    where a provider-reported limit comes in); otherwise only the table is asked.
    """
    method = getattr(provider, "known_input_limit", None)
    if callable(method):
        value = method(model)
        return int(value) if isinstance(value, int) and value > 0 else None
    return lookup_model(model).input_limit if is_known_model(model) else None


def configured_or_known(overrides: Mapping[str, Any] | None, model: str) -> int | None:
    """``input_limit`` from a ``[models."p/m"]`` table, else the known-model table's."""
    value = (overrides or {}).get("input_limit")
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return lookup_model(model).input_limit if is_known_model(model) else None


def soft_budget(model: str, input_limit: int | None) -> int:
    """``auto_compress_above``: 250k for Claude Opus models, 230k for GPT models, 200k for
    others; never more than 90 % of a known input limit; 200k when the limit is unknown."""
    if not input_limit:
        return DEFAULT_SOFT_BUDGET
    name = model.lower()
    budget = next((value for key, value in FAMILY_BUDGETS if key in name), DEFAULT_SOFT_BUDGET)
    return min(budget, int(input_limit * LIMIT_SHARE))
