"""Sandbox introspection from a contract: inspect.signature, __annotations__, get_type_hints."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Sequence
from typing import Any

import pytest

from vis_core.contracts.introspect import contract_function, signature_from_contract
from vis_core.extension.symbols import Symbol
from vis_core.extension_host.symbol_tools import tool_contract

from .examples import Greeter, Results


class _Proxy:
    """Like the sandbox's tool proxy: ``.contract`` plus ``__wrapped__``, no ``__signature__``."""

    def __init__(self, contract: dict[str, Any]) -> None:
        self.contract = contract
        self.__wrapped__ = contract_function(contract)
        self.__annotations__ = dict(self.__wrapped__.__annotations__)

    async def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return None


@pytest.fixture
def hello() -> _Proxy:
    [member] = Symbol(Greeter(), name="greet").contract["members"]
    return _Proxy(member)


def test_signature_text_round_trips(hello: _Proxy) -> None:
    signature = inspect.signature(hello)
    assert str(signature) == hello.contract["signature"]
    assert [p.kind for p in signature.parameters.values()] == [
        inspect.Parameter.POSITIONAL_ONLY,
        inspect.Parameter.KEYWORD_ONLY,
    ]
    assert signature.parameters["loud"].default is False
    assert not hasattr(hello, "__signature__")


def test_annotations_are_real_objects_or_quoted_records(hello: _Proxy) -> None:
    assert hello.__annotations__ == {"name": str, "loud": bool, "return": "Results"}


def test_get_type_hints_needs_localns_for_records(hello: _Proxy) -> None:
    with pytest.raises(NameError, match="Results"):
        typing.get_type_hints(hello)
    hints = typing.get_type_hints(hello, localns={"Results": Results})
    assert hints == {"name": str, "loud": bool, "return": Results}


def test_opaque_default_is_an_ellipsis_placeholder() -> None:
    marker = object()

    def pick(limit: int = marker, mode: str = "a", stop: Any = ...) -> None:  # type: ignore[assignment]
        """Pick items."""

    contract = tool_contract(pick)
    assert contract["signature"] == (
        "(limit: int = ..., mode: str = 'a', stop: Any = Ellipsis) -> None"
    )
    params = signature_from_contract(contract).parameters
    assert params["limit"].default is Ellipsis
    assert params["mode"].default == "a"
    assert params["stop"].default is Ellipsis


def test_variadic_and_unannotated_parameters() -> None:
    def gather(first, *rest: int, flag=True, **extra: str):
        """Gather values."""

    contract = tool_contract(gather)
    assert contract["signature"] == "(first, *rest: int, flag=True, **extra: str)"
    signature = signature_from_contract(contract)
    assert str(signature) == contract["signature"]
    assert signature.return_annotation is inspect.Signature.empty


def annotation_from_text(text: str) -> Any:
    return signature_from_contract({"signature": f"() -> {text}"}).return_annotation


def test_annotation_resolution_from_text() -> None:
    assert annotation_from_text("list[int] | None") == (list[int] | None)
    assert annotation_from_text("Sequence[str]") == Sequence[str]
    assert annotation_from_text("Literal['a', 'b']") == typing.Literal["a", "b"]
    forward = "Result"
    assert annotation_from_text("tuple['Result', ...]") == tuple[forward, ...]
    assert annotation_from_text("'Result' | None") == typing.Optional[forward]  # noqa: UP045
    assert annotation_from_text("'Result | None'") == typing.Optional[forward]  # noqa: UP045
    assert annotation_from_text("Literal['a | b']") == typing.Literal["a | b"]
    assert annotation_from_text("'Results'") == "Results"


def test_contract_function_only_describes() -> None:
    function = contract_function(
        {"name": "git.status", "signature": "() -> str", "description": "Show status."}
    )
    assert function.__qualname__ == "git.status" and function.__doc__ == "Show status."
    with pytest.raises(TypeError, match=r"await git.status\(...\) instead"):
        function()
