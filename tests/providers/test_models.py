"""The model table: limits and prices, snapshot names, defaults, overrides and cost."""

from __future__ import annotations

import pytest

from vis_core.model.usage import Usage
from vis_core.providers.base import ProviderConfigError
from vis_core.providers.models import DEFAULT_MODEL_INFO, KNOWN_MODELS, is_known_model, lookup_model


def test_known_models_cover_both_providers() -> None:
    for name in (
        "claude-opus-4-5",
        "claude-sonnet-4-6",
        "claude-haiku-4-5",
        "gpt-5",
        "gpt-5-mini",
        "gpt-4.1",
        "gpt-4o",
        "o3",
        "o4-mini",
    ):
        info = lookup_model(name)
        assert info.input_price > 0 and info.output_price > info.input_price, name
        assert info.cache_read_price < info.input_price, name
    assert (
        lookup_model("claude-sonnet-4-6").cache_write_price
        > lookup_model("claude-sonnet-4-6").input_price
    )
    assert lookup_model("gpt-5").cache_write_price == 0


@pytest.mark.parametrize(
    ("name", "base"),
    [
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("gpt-5-2025-08-07", "gpt-5"),
        ("chatgpt-4o-latest", None),
        ("anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"),
        ("openai/gpt-4o-mini", "gpt-4o-mini"),
        ("GPT-4o", "gpt-4o"),
    ],
)
def test_snapshot_and_routed_names_find_their_base(name: str, base: str | None) -> None:
    expected = KNOWN_MODELS[base] if base else DEFAULT_MODEL_INFO
    assert lookup_model(name) == expected
    assert is_known_model(name) is (base is not None)


def test_unknown_model_defaults_to_128k_and_free() -> None:
    info = lookup_model("qwen3:30b")
    assert info.input_limit == 128_000
    assert info.cost(Usage(1000, 1000, 1000, 1000)) == 0.0


def test_image_input_is_known_for_the_table_and_declared_for_others() -> None:
    assert lookup_model("claude-sonnet-4-6").images and lookup_model("gpt-4o-2024-08-06").images
    assert lookup_model("anthropic/claude-opus-4.5").images
    assert not lookup_model("o3-mini").images  # text only
    assert not lookup_model("qwen3").images  # a local model: no, unless declared
    assert lookup_model("qwen3", {"images": True}).images
    assert not lookup_model("gpt-4o", {"images": False}).images


def test_overrides_replace_limits_and_prices() -> None:
    info = lookup_model("qwen3", {"input_limit": 32768, "input_price": 0.1, "output_price": 0.4})
    assert info.input_limit == 32768
    assert info.cost(Usage(input=1_000_000, output=500_000)) == pytest.approx(0.3)
    assert lookup_model("gpt-4o", {"input_limit": 1000}).output_price == 10.0


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"context": 5}, "unknown setting 'context'"),
        ({"input_limit": "big"}, "input_limit must be a number >= 0"),
        ({"input_price": -1}, "input_price must be a number >= 0"),
        ({"input_limit": True}, "input_limit must be a number >= 0"),
        ({"images": "yes"}, "images must be true or false, not 'yes'"),
    ],
)
def test_bad_overrides_name_the_table(overrides: dict, message: str) -> None:
    with pytest.raises(ProviderConfigError) as failure:
        lookup_model("m", overrides, where='[models."ollama/m"] in config.toml')
    assert message in str(failure.value)
    assert '[models."ollama/m"]' in str(failure.value)


def test_cost_of_a_cached_claude_request() -> None:
    usage = Usage(input=2_000, output=1_000, cache_read=100_000, cache_write=10_000)
    cost = lookup_model("claude-sonnet-4-6").cost(usage)
    assert cost == pytest.approx((2_000 * 3 + 1_000 * 15 + 100_000 * 0.3 + 10_000 * 3.75) / 1e6)
