"""``vis.NetworkFilter`` declarations and what a filter may answer."""

from __future__ import annotations

import pytest

import vis_core.extension as vis
from vis_core.extension.network import decision
from vis_core.model.network import HeaderRewrite


def test_network_filter_declarations_are_checked() -> None:
    def allow(request: vis.NetworkRequest) -> bool:
        return True

    ext = vis.Extension(
        name="net", description="d", network_filters=[vis.NetworkFilter("local", allow)]
    )
    assert ext.network_filters[0].name == "local"
    with pytest.raises(ValueError, match="use vis.NetworkFilter declarations"):
        vis.Extension(name="net", description="d", network_filters=[allow])
    with pytest.raises(ValueError, match="network filter 'a' is declared twice"):
        vis.Extension(
            name="net",
            description="d",
            network_filters=[vis.NetworkFilter("a", allow), vis.NetworkFilter("a", allow)],
        )
    with pytest.raises(ValueError, match="request must be a function"):
        vis.NetworkFilter("a", "allow")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="is not a header name"):
        vis.rewrite_headers(set={"Bad Header": "x"})
    with pytest.raises(ValueError, match="must be one line"):
        vis.rewrite_headers(set={"X-A": "a\r\nInjected: 1"})


def test_a_filter_answers_allow_block_rewrite_or_nothing() -> None:
    assert decision("f", None) == ("none",)
    assert decision("f", True) == ("allow",)
    assert decision("f", False) == ("block", "network filter 'f' refused it")
    assert decision("f", vis.block("no", hint="ask")) == ("block", "no (ask)")
    rewrite = vis.rewrite_headers(set={"X-A": "1"}, remove=["Cookie"])
    assert decision("f", rewrite) == ("rewrite", HeaderRewrite((("X-A", "1"),), ("Cookie",)))
    with pytest.raises(TypeError, match="network filter 'f' answered str"):
        decision("f", "allow")
    request = vis.NetworkRequest("GET", "http", "example.com", 8080, "/a", (("Host", "x"),))
    assert request.url == "http://example.com:8080/a" and request.header("host") == "x"
