"""Prompt templates are files with [system] and [user] sections, in Jinja2."""

from __future__ import annotations

from pathlib import Path

import pytest

from guardsearch import ConfigError, Context, PromptTemplate
from guardsearch.prompts import prompt

CTX = Context(objective="List three primary colours")


def test_a_template_is_parsed_into_system_and_user_sections() -> None:
    template = PromptTemplate.parse("[system]\nYou are terse.\n\n[user]\nSay {{ word }}.\n")
    assert (template.system, template.user) == ("You are terse.", "Say {{ word }}.")


def test_the_system_section_is_optional() -> None:
    template = PromptTemplate.parse("[user]\nGo.")
    system, user = template.render(CTX)
    assert system.content == CTX.render()
    assert user.content == "Go."


def test_rendering_fills_variables_and_the_objective() -> None:
    template = PromptTemplate.parse("[system]\nTopic: {{ topic }}\n[user]\n{{ objective }}")
    system, user = template.render(CTX, topic="art")
    assert system.content.endswith("Topic: art")
    assert user.content == "List three primary colours"


def test_a_template_without_a_user_section_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"needs a \[user\] section"):
        PromptTemplate.parse("[system]\nYou are terse.")


def test_text_before_the_first_section_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="text before the first"):
        PromptTemplate.parse("hello\n[user]\nGo.")


def test_bad_jinja_is_a_config_error_naming_the_source_and_line() -> None:
    with pytest.raises(ConfigError, match=r"my\.j2: template error line 2"):
        PromptTemplate.parse("[user]\nfine\n{% if x %}never closed", source="my.j2")


def test_an_undefined_variable_is_a_config_error() -> None:
    template = PromptTemplate.parse("[user]\nSay {{ word }}.", source="say.j2")
    with pytest.raises(ConfigError, match=r"say\.j2: 'word' is undefined"):
        template.render(CTX)


def test_the_packaged_ask_template_renders_plain_text_instructions() -> None:
    system, user = PromptTemplate.packaged("ask").render(CTX, schema="")
    assert system.content.startswith("Primary objective: List three primary colours")
    assert "Reply briefly, in plain text." in system.content
    assert user.content == "List three primary colours"


def test_the_packaged_ask_template_renders_a_schema_when_given() -> None:
    system, _ = PromptTemplate.packaged("ask").render(CTX, schema='{"type": "object"}')
    assert 'It must validate against this JSON Schema:\n{"type": "object"}' in system.content
    assert "plain text" not in system.content


def test_an_unknown_packaged_template_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="no packaged prompt named 'nope'"):
        PromptTemplate.packaged("nope")


def test_a_template_file_is_read_and_named_after_its_path(tmp_path: Path) -> None:
    path = tmp_path / "t.j2"
    path.write_text("[user]\nGo.")
    assert PromptTemplate.from_file(path).source == str(path)


def test_a_missing_template_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read prompt template"):
        PromptTemplate.from_file(tmp_path / "absent.j2")


def test_the_digest_depends_only_on_the_content() -> None:
    a = PromptTemplate.parse("[user]\nGo.", source="a.j2")
    b = PromptTemplate.parse("[user]\nGo.", source="b.j2")
    assert a.digest == b.digest
    assert a.digest != PromptTemplate.parse("[user]\nStop.").digest


def test_a_plain_string_is_literal_user_text() -> None:
    template = prompt("Just {{ this }}.")
    assert (template.system, template.user, template.literal) == ("", "Just {{ this }}.", True)
    assert template.render(CTX)[1].content == "Just {{ this }}."


def test_a_plain_string_with_sections_is_still_literal_text() -> None:
    template = prompt("[system]\nS\n[user]\nU")
    assert template.system == "" and template.user == "[system]\nS\n[user]\nU"
    assert PromptTemplate.parse("[system]\nS\n[user]\nU").system == "S"


def test_inline_templates_explicitly() -> None:
    template = PromptTemplate.inline("Pick a {{ kind }} colour.")
    assert template.render(CTX, kind="warm")[1].content == "Pick a warm colour."
    assert template.digest != prompt("Pick a {{ kind }} colour.").digest
