"""How long a server asks a client to wait before trying again, from its answer's headers."""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime

# OpenAI and Groq say a limit resets in a duration: "20s", "6m0s", "1h2m3.5s", "250ms".
_DURATION = re.compile(
    r"(?:(?P<h>\d+(?:\.\d+)?)h)?(?:(?P<m>\d+(?:\.\d+)?)m(?!s))?"
    r"(?:(?P<s>\d+(?:\.\d+)?)s)?(?:(?P<ms>\d+(?:\.\d+)?)ms)?"
)
_SCALE = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
# The limits servers reset: OpenAI's and Groq's per kind, OpenRouter's one (``x-ratelimit-reset``).
_RESET_LIMITS = ("-requests", "-tokens", "-input-tokens", "-output-tokens", "")


def _seconds(value: str, now: float) -> float | None:
    """A wait as headers write it: seconds, a duration, a Unix time (seconds or milliseconds)
    or an HTTP date; None when it is none of these."""
    value = value.strip()
    try:
        number = float(value)
    except ValueError:
        pass
    else:
        if number > 1e12:  # a Unix time in milliseconds (OpenRouter)
            return number / 1000 - now
        return number - now if number > 1e9 else number
    found = _DURATION.fullmatch(value)
    if found is not None and value:
        return sum(float(v) * _SCALE[k] for k, v in found.groupdict().items() if v)
    try:
        return parsedate_to_datetime(value).timestamp() - now
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """The seconds ``headers`` ask to wait before another try: ``retry-after-ms``, else
    ``Retry-After`` (seconds or an HTTP date), else the latest ``x-ratelimit-reset*`` of a
    limit used up (of any limit when none says it is); None when they do not say."""
    now = time.time() if now is None else now
    try:
        return max(float(headers.get("retry-after-ms") or "") / 1000, 0.0)
    except ValueError:
        pass
    value = headers.get("retry-after")
    wait = _seconds(value, now) if value else None
    if wait is not None:
        return max(wait, 0.0)
    resets: dict[str, float] = {}
    for limit in _RESET_LIMITS:
        value = headers.get(f"x-ratelimit-reset{limit}")
        wait = _seconds(value, now) if value else None
        if wait is not None:
            resets[limit] = max(wait, 0.0)
    used_up = [w for k, w in resets.items() if headers.get(f"x-ratelimit-remaining{k}") == "0"]
    return max(used_up or resets.values(), default=None)
