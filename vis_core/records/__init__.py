"""What crosses the sandbox boundary: dataclass → wire → frozen record → the tool's class.

Host side: :func:`encode_result` (a tool's return value → wire data) and
:func:`coerce_arguments` (rebuild records in a tool's arguments before calling it).
Sandbox side: :func:`decode` (wire data → values with frozen :class:`Record` objects).
Importing this package registers the ``record`` codec with :mod:`vis_core.ipc.values`.
"""

from __future__ import annotations

from typing import Any

from vis_core.contracts.sequence import sequence, sequence_field_of
from vis_core.ipc import values as wire
from vis_core.records import registry
from vis_core.records.codec import (
    TAG,
    decode_record,
    encode_record,
    is_record_value,
    owner_scope,
)
from vis_core.records.rebuild import coerce_arguments, plain, rebuild
from vis_core.records.record import Record, RecordInfo, SequenceRecord

wire.register_codec(TAG, is_record_value, encode_record, decode_record)


def encode_result(
    value: Any, *, owner: str | None = None, handle_out: wire.HandleOut | None = None
) -> Any:
    """A tool's return value as wire data; dataclasses become record payloads.

    Properties and ``__str__`` are computed here, once. ``owner`` (the tool's extension)
    registers the classes met for :mod:`~vis_core.records.registry` lookups after a reload.
    """
    with owner_scope(owner):
        return wire.encode(value, handle_out=handle_out)


def decode(data: Any, *, handle_in: wire.HandleIn | None = None) -> Any:
    """Wire data back into values; record payloads become frozen :class:`Record` objects."""
    return wire.decode(data, handle_in=handle_in)


__all__ = [
    "Record",
    "RecordInfo",
    "SequenceRecord",
    "coerce_arguments",
    "decode",
    "encode_result",
    "plain",
    "rebuild",
    "registry",
    "sequence",
    "sequence_field_of",
]
