"""Form components: declaration checks, field validation messages, answers and secrets."""

from __future__ import annotations

import pickle

import pytest

from vis_core.extension import forms as vis
from vis_core.extension.forms import Answer, AnswerReason, FieldType, Form, FormDeclarationError


def _form(*nodes: object) -> Form:
    return Form("Deploy", tuple(nodes))


def test_every_builder_makes_its_field_type() -> None:
    built = [
        vis.plaintext("a"),
        vis.password("b"),
        vis.multiline("c"),
        vis.select("d", options=["x"]),
        vis.multiselect("e", options=["x"]),
        vis.checkbox("f"),
        vis.slider("g"),
        vis.otp("h"),
    ]
    assert [f.type for f in built] == list(FieldType)
    assert vis.plaintext("first_name").label == "First name"
    assert vis.slider("g").min == 0 and vis.slider("g").max == 100 and vis.slider("g").step == 1


def test_layout_nodes_nest_and_fields_are_found_in_order() -> None:
    form = _form(
        vis.heading("Target"),
        vis.paragraph("Pick one."),
        vis.row(vis.plaintext("host"), vis.column(vis.plaintext("port"), vis.checkbox("tls"))),
        vis.group(vis.plaintext("note"), direction="row"),
    )
    assert [f.name for f in form.fields()] == ["host", "port", "tls", "note"]
    assert form.nodes[2].direction == "row"


def test_a_layout_takes_its_nodes_as_one_list_too() -> None:
    """``vis.group([a, b], direction="row")`` (a list, as vis.ask takes) built a group holding
    the list, and the form then failed with every Field's repr in its message."""
    form = _form(
        vis.group([vis.plaintext("a"), vis.plaintext("b")], direction="row"),
        vis.column((vis.plaintext("c"),)),
    )
    assert [f.name for f in form.fields()] == ["a", "b", "c"]
    with pytest.raises(FormDeclarationError) as caught:
        _form(vis.row(vis.plaintext("d"), [vis.plaintext("e"), vis.plaintext("f")]))
    message = str(caught.value)
    assert "a list of 2 item(s) (a layout takes its nodes as arguments" in message
    assert "Field(" not in message, message


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: vis.select("env"), "field 'env': a select needs options"),
        (lambda: vis.select("env", options=["a", "a"]), "option values must be unique"),
        (lambda: vis.plaintext("x", options=["a"]), "options apply only to select"),
        (lambda: vis.slider("n", min=5, max=5), "min (5) must be below max (5)"),
        (lambda: vis.slider("n", step=0), "step must be above 0"),
        (lambda: vis.otp("code", length=4), "an otp code has 6 to 12 digits"),
        (lambda: vis.password("pw", default="x"), "a secret field cannot have a default"),
        # the spec's components table: plaintext is "one line"
        (lambda: vis.plaintext("x", default="a\nb"), "expected one line of text"),
        (lambda: vis.plaintext("x", default="a\u2028b"), "expected one line of text"),
        (lambda: vis.slider("n", default=500), "pick a number from 0 to 100"),
        (lambda: vis.plaintext("1bad"), "name must start with a letter"),
        (lambda: vis.plaintext("x", min_length=5, max_length=2), "min_length is larger"),
        (lambda: vis.plaintext("x", validate="nope"), "validate takes a function"),
        (lambda: vis.heading("H", level=7), "level must be 1 to 6"),
        (
            lambda: _form(vis.plaintext("a"), vis.row(vis.plaintext("a"))),
            "two fields are named 'a'",
        ),
        (lambda: _form("just text"), "is not a component here"),
        (lambda: Form("", ()), "the form needs a title"),
        (lambda: Form("T", (), timeout_ms=-1), "timeout_ms must be a whole number"),
        (lambda: Form("T", (), timeout_ms=True), "timeout_ms must be a whole number"),
        (lambda: Form("T", (), submit_label=None), "submit_label must be text"),  # type: ignore[arg-type]
    ],
)
def test_wrong_declarations_say_what_to_fix(build: object, message: str) -> None:
    with pytest.raises(FormDeclarationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        build()  # type: ignore[operator]


def test_validation_names_each_wrong_field_and_passes_good_values() -> None:
    def no_spaces(value: str) -> str | None:
        return "No spaces, please." if " " in value else None

    form = _form(
        vis.plaintext("name", is_required=True, min_length=3, validate=[no_spaces]),
        vis.select("env", options=[vis.option("prod", "Production"), "dev"], is_required=True),
        vis.multiselect("regions", options=["eu", "us"], is_required=True),
        vis.checkbox("agree", is_required=True),
        vis.slider("replicas", min=1, max=9, step=2),
        vis.otp("code", length=6),
        vis.multiline("notes", max_length=5),
    )
    errors = form.check(
        {
            "name": "a b",
            "env": None,
            "regions": [],
            "agree": False,
            "replicas": 4,
            "code": "12a456",
            "notes": "toolong",
        }
    )
    assert errors == {
        "name": "No spaces, please.",
        "env": "Required: choose one option.",
        "regions": "Required: choose at least one option.",
        "agree": "Required: tick this box to go on.",
        "replicas": "Invalid: use steps of 2 from 1.",
        "code": "Enter the 6-digit code (digits only).",
        "notes": "Too long: at most 5 characters (now 7).",
    }
    assert form.check({"name": "ab"})["name"] == "Too short: at least 3 characters (now 2)."
    # "otp | digits only": the ASCII digits a code is made of, not any character that
    # str.isdigit() takes (superscripts, Arabic-Indic digits)
    for code in ("²²²²²²", "١٢٣٤٥٦"):
        assert form.check({"code": code})["code"] == "Enter the 6-digit code (digits only)."
    assert form.check({"name": "ab\ncd"})["name"] == (
        "Invalid: expected one line of text (vis.multiline takes more)."
    )
    good = {
        "name": "abc",
        "env": "prod",
        "regions": ["us", "eu"],
        "agree": True,
        "replicas": 5,
        "code": "123456",
        "notes": "ok",
    }
    assert form.check(good) == {}
    answer = form.answer(good)
    assert answer and answer.reason is None
    assert answer.values["regions"] == ["eu", "us"]  # declared order
    assert answer["replicas"] == 5 and isinstance(answer["replicas"], int)


def test_a_broken_validator_is_reported_on_its_field() -> None:
    def broken(value: str) -> str | None:
        raise ValueError("boom")

    form = _form(vis.plaintext("x", validate=broken))
    assert form.check({"x": "v"}) == {"x": "The check of this field failed: ValueError: boom"}


def test_secrets_are_handles_never_shown() -> None:
    form = _form(vis.plaintext("user"), vis.password("token"), vis.otp("code"))
    answer = form.answer({"user": "ann", "token": "s3cret-value", "code": "123456"})
    assert answer.reveal("token") == "s3cret-value"
    assert answer.reveal("code") == "123456"
    for text in (repr(answer), str(answer), repr(answer.values), str(answer["token"])):
        assert "s3cret" not in text and "123456" not in text
    assert "ann" in repr(answer)
    with pytest.raises(TypeError, match="field 'user' is not a secret"):
        answer.reveal("user")
    with pytest.raises(KeyError, match="no field 'nope'"):
        answer.reveal("nope")
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(answer["token"])


def test_unanswered_answers_are_falsy_with_a_reason() -> None:
    for reason in AnswerReason:
        answer = Answer(reason=reason)
        assert not answer and answer.reason is reason and answer.values == {}
    assert repr(Answer(reason="timeout")) == "Answer(timeout, values={})"


def test_ask_outside_vis_is_undeliverable() -> None:
    answer = vis.ask("Who?", [vis.plaintext("name")])
    assert not answer and answer.reason is AnswerReason.UNDELIVERABLE
