"""Frozen records in the sandbox: what a returned dataclass becomes on the other side.

Stdlib only: the sandbox child imports this module.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn, cast


@dataclass(frozen=True, slots=True)
class RecordInfo:
    """Where a record came from and what it carries besides its fields."""

    type: str
    owner: str | None = None
    qualname: str | None = None
    derived: tuple[str, ...] = ()
    text: str | None = None
    sequence: str | None = None


class Record:
    """A frozen data record: ``r.name`` and ``r["name"]``; not a mapping, not iterable."""

    __slots__ = ("_vis_fields", "_vis_info")
    __iter__ = None  # type: ignore[assignment]  # records are not iterable by default
    __hash__ = None  # type: ignore[assignment]

    _vis_fields: dict[str, Any]
    _vis_info: RecordInfo

    def __init__(self, fields: dict[str, Any], info: RecordInfo) -> None:
        object.__setattr__(self, "_vis_fields", dict(fields))
        object.__setattr__(self, "_vis_info", info)

    def _vis_available(self) -> str:
        return ", ".join(self._vis_fields) or "none"

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        try:
            return object.__getattribute__(self, "_vis_fields")[name]
        except KeyError:
            raise AttributeError(
                f"{self._vis_info.type!r} record has no field {name!r}; "
                f"available fields: {self._vis_available()}",
                name=name,
                obj=self,
            ) from None

    def __getitem__(self, key: Any) -> Any:
        if not isinstance(key, str):
            raise TypeError(
                f"{self._vis_info.type!r} record indices must be field names (str), "
                f"not {type(key).__name__}; available fields: {self._vis_available()}"
            )
        try:
            return self._vis_fields[key]
        except KeyError:
            raise KeyError(
                f"{self._vis_info.type!r} record has no field {key!r}; "
                f"available fields: {self._vis_available()}"
            ) from None

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        raise AttributeError(
            f"{self._vis_info.type!r} record is read-only: cannot set {name!r}; "
            "build a new value or pass what you need to a tool"
        )

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"{self._vis_info.type!r} record is read-only: cannot delete {name!r}")

    def __setitem__(self, key: Any, value: Any) -> NoReturn:
        raise TypeError(f"{self._vis_info.type!r} record does not support item assignment")

    def __delitem__(self, key: Any) -> NoReturn:
        raise TypeError(f"{self._vis_info.type!r} record does not support item deletion")

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={value!r}" for name, value in self._vis_fields.items())
        return f"{self._vis_info.type}({inner})"

    def __str__(self) -> str:
        text = self._vis_info.text
        return text if text is not None else repr(self)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Record):
            return NotImplemented
        return self._vis_info.type == other._vis_info.type and self._vis_fields == other._vis_fields

    def __dir__(self) -> list[str]:
        return list(self._vis_fields)

    def __reduce__(self) -> tuple[Any, ...]:
        return (restore_record, (dict(self._vis_fields), info_state(self._vis_info)))


class SequenceRecord(Record):
    """A record declared with ``@vis.sequence``: list-like over its backing field."""

    __slots__ = ()

    def _vis_items(self) -> list[Any]:
        return self._vis_fields[self._vis_info.sequence or ""]

    def __iter__(self) -> Iterator[Any]:  # type: ignore[override]
        return iter(self._vis_items())

    def __len__(self) -> int:
        return len(self._vis_items())

    def __bool__(self) -> bool:
        return bool(self._vis_items())

    def __contains__(self, item: object) -> bool:
        return item in self._vis_items()

    def __reversed__(self) -> Iterator[Any]:
        return reversed(self._vis_items())

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            return list(self._vis_items()[key])
        if isinstance(key, int) and not isinstance(key, bool):
            return self._vis_items()[key]
        if isinstance(key, str):
            return super().__getitem__(key)
        raise TypeError(
            f"{self._vis_info.type!r} record indices must be integers, slices or field names "
            f"(str), not {type(key).__name__}"
        )


_CLASSES: dict[tuple[str, bool], type[Record]] = {}


def record_class(type_name: str, is_sequence: bool) -> type[Record]:
    """The (cached) sandbox-side class named after the host type."""
    key = (type_name, is_sequence)
    cls = _CLASSES.get(key)
    if cls is None:
        base = SequenceRecord if is_sequence else Record
        namespace = {"__slots__": (), "__module__": __name__}
        cls = cast("type[Record]", type(type_name, (base,), namespace))  # a subclass of base
        cls.__qualname__ = type_name
        _CLASSES[key] = cls
    return cls


def make_record(fields: dict[str, Any], info: RecordInfo) -> Record:
    """Build the sandbox record for ``fields`` described by ``info``."""
    sequence = info.sequence
    is_sequence = sequence is not None and isinstance(fields.get(sequence), list)
    return record_class(info.type, is_sequence)(fields, info)


def info_state(info: RecordInfo) -> dict[str, Any]:
    """``info`` as plain data: a record's pickled state; with ``fields``, the value codec's
    record payload."""
    return {
        "type": info.type,
        "owner": info.owner,
        "qualname": info.qualname,
        "derived": list(info.derived),
        "text": info.text,
        "sequence": info.sequence,
    }


def restore_record(fields: dict[str, Any], state: Mapping[str, Any]) -> Record:
    """The record of ``fields`` that ``state`` (:func:`info_state`) describes: unpickled (saved
    sandbox variables survive a restart) or decoded (what a payload lacks takes its default)."""
    info = RecordInfo(
        type=str(state.get("type") or "Record"),
        owner=state.get("owner"),
        qualname=state.get("qualname"),
        derived=tuple(state.get("derived") or ()),
        text=state.get("text"),
        sequence=state.get("sequence"),
    )
    return make_record(fields, info)
