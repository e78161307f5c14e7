"""SchemaGuard: a JSON Schema dict or a pydantic model; violations are feedback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from guardsearch import Artifact, ConfigError, Context, SchemaGuard
from guardsearch.guards.schema import load_schema_file

CTX = Context(objective="list colours")
COLOURS = {
    "type": "object",
    "properties": {"colours": {"type": "array", "items": {"type": "string"}, "minItems": 1}},
    "required": ["colours"],
}


class Colours(BaseModel):
    colours: list[str] = Field(min_length=1)


def text(raw: str) -> Artifact:
    return Artifact(id="a", step="s", text=raw)


def value(v: object) -> Artifact:
    return Artifact(id="a", step="s", text=json.dumps(v), value=v)


# dict schema


async def test_a_matching_value_passes_a_dict_schema() -> None:
    result = await SchemaGuard(COLOURS).check(value({"colours": ["red"]}), CTX)
    assert result.passed


async def test_the_text_is_parsed_as_json_when_the_artifact_has_no_value() -> None:
    result = await SchemaGuard(COLOURS).check(text('{"colours": ["red"]}'), CTX)
    assert result.passed


async def test_a_missing_field_is_named_in_the_feedback() -> None:
    result = await SchemaGuard(COLOURS).check(value({"shades": []}), CTX)
    assert not result.passed
    assert "missing required field" in result.feedback
    assert "'colours'" in result.feedback


async def test_a_violation_names_its_location() -> None:
    result = await SchemaGuard(COLOURS).check(value({"colours": ["red", 7]}), CTX)
    assert not result.passed
    assert "at colours/1" in result.feedback


async def test_many_violations_are_capped_and_counted() -> None:
    schema = {"type": "array", "items": {"type": "string"}}
    result = await SchemaGuard(schema).check(value(list(range(8))), CTX)
    assert not result.passed
    assert result.feedback.count("is not of type") == 5
    assert "(+3 more)" in result.feedback


async def test_unparseable_text_is_failing_feedback_not_an_exception() -> None:
    result = await SchemaGuard(COLOURS).check(text("colours: red, blue"), CTX)
    assert not result.passed
    assert "not parseable as JSON" in result.feedback


async def test_empty_text_is_failing_feedback() -> None:
    result = await SchemaGuard(COLOURS).check(text("   "), CTX)
    assert not result.passed
    assert "empty" in result.feedback


# pydantic model


async def test_a_matching_value_passes_a_pydantic_model() -> None:
    result = await SchemaGuard(Colours).check(value({"colours": ["red"]}), CTX)
    assert result.passed


async def test_a_pydantic_missing_field_is_named_in_the_feedback() -> None:
    result = await SchemaGuard(Colours).check(value({"shades": ["red"]}), CTX)
    assert not result.passed
    assert "at colours: Field required" in result.feedback


async def test_a_pydantic_constraint_violation_is_feedback() -> None:
    result = await SchemaGuard(Colours).check(value({"colours": []}), CTX)
    assert not result.passed
    assert "at colours" in result.feedback


async def test_a_pydantic_model_exposes_its_json_schema() -> None:
    guard = SchemaGuard(Colours)
    assert guard.json_schema["required"] == ["colours"]


# configuration


def test_an_invalid_json_schema_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="invalid JSON Schema"):
        SchemaGuard({"type": "no-such-type"})


def test_something_that_is_not_a_schema_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="not a schema"):
        SchemaGuard(42)  # type: ignore[arg-type]


def test_a_schema_file_is_loaded_and_checked(tmp_path: Path) -> None:
    path = tmp_path / "colours.json"
    path.write_text(json.dumps(COLOURS))
    assert load_schema_file(str(path)) == COLOURS


def test_a_schema_file_that_is_not_json_is_a_config_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text("{not json")
    with pytest.raises(ConfigError, match=r"broken\.json"):
        load_schema_file(str(path))


def test_a_missing_schema_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read schema file"):
        load_schema_file(str(tmp_path / "absent.json"))
