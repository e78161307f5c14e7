"""`guardsearch plan "TASK"`: a free task judged by its spec, with honest outcomes."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from guardsearch.cli import app

runner = CliRunner()
OFFSITE = "Organise a one-day offsite for 12 people in Lisbon with a budget of 2000 euros"
ANALYSIS = json.dumps({"problem_class": "event", "key_facts": ["offsite_held"]})
RECON = json.dumps({"actions": ["book_venue", "order_catering", "plan_agenda"]})
STRATEGY = json.dumps(
    {
        "approach": "venue first",
        "rationale": "the venue fixes the date and the catering",
        "order": ["book_venue", "order_catering", "plan_agenda"],
    }
)


def _plan(*steps: tuple[str, str, int | None]) -> str:
    out = []
    for i, (action, detail, cost) in enumerate(steps, 1):
        step: dict[str, object] = {"id": f"s{i}", "action": action, "detail": detail}
        if cost is not None:
            step["cost"] = cost
        out.append(step | {"retry_budget": 1})
    return json.dumps({"steps": out})


GOOD = _plan(
    ("book_venue", "meeting room in Lisbon for 12 people", 900),
    ("order_catering", "lunch and coffee for twelve", 400),
    ("plan_agenda", "a full-day agenda, 9:00 to 17:00", None),
)
# The plan the issue saw: no details, three repeats, no constraint addressed.
JUNK = json.dumps(
    {
        "steps": [
            {"id": f"s{i}", "action": a, "retry_budget": 1}
            for i, a in enumerate(
                ["organize_offsite", "budget", "people", "organize_offsite", "budget", "people"],
                1,
            )
        ]
    }
)


def scripted(tmp_path: Path, answers: list[str]) -> str:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(answers))
    return f"scripted:{path}"


def test_a_plan_that_covers_the_task_succeeds_and_shows_the_spec(tmp_path: Path) -> None:
    # The default pipeline (search): a free task's plan first, as `single` would.
    model = scripted(tmp_path, [GOOD])
    result = runner.invoke(app, ["plan", OFFSITE, "--model", model, "--json"])
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["succeeded"] is True and out["guard_level"] == "task" and out["calls"] == 1
    assert out["spec"]["kind"] == "event"
    kinds = {c["kind"]: c for c in out["spec"]["constraints"]}
    assert kinds["people"]["value"] == 12 and kinds["place"]["text"] == "Lisbon"
    assert kinds["budget"]["value"] == 2000 and kinds["budget"]["unit"] == "EUR"
    assert kinds["duration"]["unit"] == "day"
    assert all(v["passed"] for v in out["verdicts"])


def test_a_junk_plan_is_not_success_and_the_verdicts_say_what_is_missing(
    tmp_path: Path,
) -> None:
    model = scripted(tmp_path, [JUNK] * 3)
    result = runner.invoke(
        app, ["plan", OFFSITE, "--pipeline", "single", "--model", model, "--json"]
    )
    assert result.exit_code == 1
    out = json.loads(result.stdout)
    assert out["succeeded"] is False
    # The best plan so far is kept, its word-for-word copies dropped before judging.
    assert [s["action"] for s in out["plan"]["steps"]] == ["organize_offsite", "budget", "people"]
    checks = {v["check"]: v for v in out["verdicts"]}
    assert checks["repaired"]["passed"]
    assert "dropped step s4 (organize_offsite): it copies step s1" in checks["repaired"]["detail"]
    failed = {v["check"]: v["detail"] for v in out["verdicts"] if not v["passed"]}
    assert set(failed) == {"concrete", "constraints"}
    for missing in ("12 people", "Lisbon", "one-day", "budget 2000 EUR"):
        assert missing in failed["constraints"]
    assert "s1 (organize_offsite) has no detail" in failed["concrete"]
    assert "s2 (budget) names no action on an object" in failed["concrete"]


def test_plain_output_keeps_the_best_plan_and_prints_the_failed_checks(tmp_path: Path) -> None:
    model = scripted(tmp_path, [JUNK] * 3)
    result = runner.invoke(app, ["plan", OFFSITE, "--pipeline", "single", "--model", model])
    assert result.exit_code == 1
    assert "s1: organize_offsite" in result.stdout
    assert "no plan passed the guards" in result.stderr
    assert "constraints: constraints addressed by no step" in result.stderr
    assert "task spec (event): one-day; 12 people; Lisbon; 2000 euros" in result.stderr


def test_a_spec_file_replaces_the_extracted_spec(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "kind: event\n"
        "constraints:\n"
        "  - {id: people, kind: people, text: 12 people, value: 12, terms: ['12']}\n"
        "  - {id: wifi, kind: deliverable, text: wifi for everyone, terms: [wifi]}\n"
    )
    model = scripted(tmp_path, [GOOD])
    result = runner.invoke(app, ["plan", OFFSITE, "--spec", str(spec), "--model", model, "--json"])
    assert result.exit_code == 1
    out = json.loads(result.stdout)
    assert out["spec"]["source"] == "file" and len(out["spec"]["constraints"]) == 2
    failed = [v["detail"] for v in out["verdicts"] if not v["passed"]]
    assert "wifi for everyone" in failed[0]


def test_a_bad_spec_file_is_a_one_line_usage_error(tmp_path: Path) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text('{"kind": "party", "constraints": []}')
    result = runner.invoke(app, ["plan", OFFSITE, "--spec", str(spec), "--json"])
    assert result.exit_code == 2
    assert "kind 'party' is not one of event" in json.loads(result.stdout)["error"]


def test_the_minimal_level_keeps_the_old_free_task_guard(tmp_path: Path) -> None:
    plain = json.dumps({"steps": [{"id": "s1", "action": "book_venue", "retry_budget": 1}]})
    model = scripted(tmp_path, [plain])
    result = runner.invoke(
        app,
        ["plan", OFFSITE, "--pipeline", "single", "--guard-level", "minimal", "--model", model,
         "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["guard_level"] == "minimal" and "not the task's spec" in out["guard_note"]


def test_extract_model_adds_the_models_grounded_phrases_and_counts_the_call(
    tmp_path: Path,
) -> None:
    # "one-day" and "12 people" are code's already; "offsite" is new.
    phrases = json.dumps({"constraints": ["12 people", "one-day", "the offsite"]})
    model = scripted(tmp_path, [phrases, GOOD])
    result = runner.invoke(app, ["plan", OFFSITE, "--extract", "model", "--model", model, "--json"])
    assert result.exit_code == 1  # the plan never says "offsite", which the model added
    out = json.loads(result.stdout)
    assert out["spec"]["source"] == "code+model" and out["spec_calls"] == 1
    added = [c for c in out["spec"]["constraints"] if c["kind"] == "requirement"]
    assert [c["text"] for c in added] == ["the offsite"]
    assert out["calls"] >= out["spec_calls"] + len({n["step"] for n in out["tree"]})


def test_an_unknown_extract_is_a_usage_error() -> None:
    result = runner.invoke(app, ["plan", OFFSITE, "--extract", "magic", "--json"])
    assert result.exit_code == 2
    assert "unknown extract 'magic'" in json.loads(result.stdout)["error"]
