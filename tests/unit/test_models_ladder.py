"""The model ladder on scripted models: routing, escalation, one budget, per-model usage,
caches, memory and specs."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from tests.unit.search.search_helpers import CountingSpace

from guardsearch import (
    Budget,
    BudgetExceeded,
    CachedModel,
    ConfigError,
    Context,
    GuardResult,
    Message,
    Metered,
    ModelRequest,
    ScriptedModel,
    Step,
    StepFailed,
    Trace,
    run_step,
)
from guardsearch.core.messages import CallInfo, Completion
from guardsearch.core.model_usage import merge_model_usage, model_usage
from guardsearch.experiments.metrics import summarize
from guardsearch.experiments.scorecard import build_scorecard, markdown
from guardsearch.experiments.trial import TrialResult
from guardsearch.models import ladder as ladder_module
from guardsearch.models.ladder import ModelLadder, split_ladder
from guardsearch.models.spec import model_from_spec
from guardsearch.search import search


def ask(call: CallInfo | None = None, text: str = "hi") -> ModelRequest:
    return ModelRequest(messages=(Message("user", text),), call=call or CallInfo())


def two(after: int = 2, **kw: object) -> tuple[ModelLadder, ScriptedModel, ScriptedModel]:
    cheap = ScriptedModel(lambda r: "cheap", name="cheap")
    strong = ScriptedModel(lambda r: "strong", name="strong")
    return ModelLadder([cheap, strong], after=after, **kw), cheap, strong  # type: ignore[arg-type]


# -- routing -------------------------------------------------------------------------


def test_the_ladder_enforces_a_schema_only_when_every_rung_does() -> None:
    # Counted as "prevented" in the steering figures: a ladder of grammar-decoding
    # models decodes under the request's schema whichever rung answers.
    def grammar(name: str) -> ScriptedModel:
        return ScriptedModel([name], name=name, constrained_decoding=True)

    both = ModelLadder([grammar("a"), grammar("b")])
    mixed = ModelLadder([grammar("a"), ScriptedModel(["b"], name="b")])
    assert Metered(both, Budget.of(calls=1), Trace()).constrained_decoding
    assert not mixed.constrained_decoding


def test_escalates_after_k_rejections() -> None:
    ladder, _, strong = two(after=2)
    assert [ladder.route(ask(CallInfo(rejections=n))).index for n in range(4)] == [0, 0, 1, 1]
    route = ladder.route(ask(CallInfo(rejections=2)))
    assert route.model is strong and route.escalated and route.reason == "2 rejections"
    assert not ladder.route(ask()).escalated


def test_three_rungs_climb_one_per_k_rejections() -> None:
    models = [ScriptedModel(["x"], name=n) for n in ("a", "b", "c")]
    ladder = ModelLadder(models, after=1)
    assert [ladder.route(ask(CallInfo(rejections=n))).index for n in range(4)] == [0, 1, 2, 2]


def test_escalates_on_repeat_and_on_named_verdict() -> None:
    ladder, _, _ = two(after=0, repeat=1, on=frozenset({"tests"}))
    assert ladder.route(ask(CallInfo(rejections=5))).index == 0  # after=0: off
    assert ladder.route(ask(CallInfo(repeats=1))).reason == "1 repeats"
    assert ladder.route(ask(CallInfo(rejections=1, verdicts=("schema",)))).index == 0
    named = ladder.route(ask(CallInfo(rejections=1, verdicts=("schema", "tests"))))
    assert named.index == 1 and named.reason == "rejected by tests"


def test_roles_start_at_their_own_rung() -> None:
    ladder, _, strong = two(after=2, roles={"code": 1})
    code = ladder.route(ask(CallInfo(role="code")))
    assert code.model is strong and not code.escalated  # started there: no escalation
    assert ladder.route(ask(CallInfo(role="judge", rejections=1))).index == 0


async def test_a_step_escalates_to_the_stronger_model_after_k_rejections() -> None:
    cheap = ScriptedModel(["wrong", "also wrong"], name="cheap")
    strong = ScriptedModel(lambda r: "right", name="strong")
    metered = Metered(ModelLadder([cheap, strong], after=2), Budget.of(calls=10), Trace())
    step = Step(name="s", prompt="Say it", guard=lambda v: v == "right", rmax=4)
    outcome = await run_step(step, Context(objective="say it"), metered)
    assert outcome.attempts == 3 and (cheap.calls, strong.calls) == (2, 1)
    calls = metered.trace.of_kind("model_call")
    assert [e.data["model"] for e in calls] == ["cheap", "cheap", "strong"]
    assert [e.data["rung"] for e in calls] == [0, 0, 1]
    assert calls[2].data["escalated"] == "2 rejections"
    (escalation,) = metered.trace.of_kind("model_escalation")
    assert escalation.data["model"] == "strong" and escalation.step == "s"
    assert escalation.data["escalated"] == "2 rejections" and escalation.data["start"] == 0
    usage = model_usage(metered.trace.events)
    assert list(usage) == ["cheap", "strong"]
    assert usage["cheap"]["calls"] == 2 and usage["cheap"]["escalations"] == 0
    assert usage["strong"]["calls"] == 1 and usage["strong"]["escalations"] == 1
    assert usage["strong"]["completion_tokens"] == 1


async def test_a_step_escalates_when_the_model_repeats_itself() -> None:
    cheap = ScriptedModel(lambda r: "same", name="cheap")
    strong = ScriptedModel(lambda r: "new", name="strong")
    ladder = ModelLadder([cheap, strong], after=0, repeat=1)
    step = Step(name="s", prompt="Say it", guard=lambda v: v == "new", rmax=4)
    outcome = await run_step(step, Context(objective="o"), Metered(ladder))
    # Attempt 2 repeats attempt 1 (dropped unjudged); attempt 3 is the first after it.
    assert outcome.attempts == 3 and (cheap.calls, strong.calls) == (2, 1)
    assert [r.call.repeats for r in cheap.requests + strong.requests] == [0, 0, 1]


async def test_a_judge_step_keeps_its_role_and_rung() -> None:
    cheap = ScriptedModel(lambda r: "no", name="cheap")
    strong = ScriptedModel(lambda r: "no", name="strong")
    ladder = ModelLadder([cheap, strong], after=1, roles={"judge": 1})
    step = Step(name="j", prompt="Judge", role="judge", guard=lambda v: False, rmax=2)
    with pytest.raises(StepFailed):
        await run_step(step, Context(objective="o"), Metered(ladder))
    assert strong.calls == 2 and cheap.calls == 0
    assert {r.call.role for r in strong.requests} == {"judge"}


def test_a_step_with_an_unknown_role_is_refused() -> None:
    with pytest.raises(ConfigError, match="role must be one of"):
        Step(name="s", prompt="p", role="boss")


async def test_both_models_share_one_budget() -> None:
    cheap = ScriptedModel(["wrong", "also wrong"], name="cheap")
    strong = ScriptedModel(["still wrong"], name="strong")
    budget = Budget.of(calls=3)
    metered = Metered(ModelLadder([cheap, strong], after=2), budget, Trace())
    step = Step(name="s", prompt="p", guard=lambda v: False, rmax=5)
    with pytest.raises(BudgetExceeded):
        await run_step(step, Context(objective="o"), metered)
    assert (cheap.calls, strong.calls) == (2, 1) and budget.used.calls == 3
    assert sum(u["calls"] for u in model_usage(metered.trace.events).values()) == 3


async def test_a_search_escalates_at_a_node_and_reports_usage_per_model() -> None:
    cheap = ScriptedModel(["5", "6"], name="cheap")  # both fail a hard rule
    strong = ScriptedModel(lambda r: "99", name="strong")  # the goal
    ladder = ModelLadder([cheap, strong], after=2)
    space = CountingSpace(hard_fail={5, 6})
    result = await search(space, "astar", model=ladder, budget=10, rmax=3)
    assert result.succeeded and (cheap.calls, strong.calls) == (2, 1)
    assert strong.requests[0].call.rejections == 2
    models = result.as_dict()["models"]
    assert models["cheap"]["calls"] == 2 and models["strong"]["escalations"] == 1
    assert result.usage.calls == 3


async def test_a_search_on_one_model_reports_no_models() -> None:
    result = await search(CountingSpace(), "astar", model=ScriptedModel(["99"]), budget=3)
    assert result.succeeded and "models" not in result.as_dict()


async def test_a_search_escalates_after_repeated_proposals() -> None:
    cheap = ScriptedModel(lambda r: "7", name="cheap")  # 7 again and again: duplicates
    strong = ScriptedModel(lambda r: "99", name="strong")
    ladder = ModelLadder([cheap, strong], after=0, repeat=1)
    space = CountingSpace(depth_limit=1)
    result = await search(space, "dfs", model=ladder, budget=10)
    assert strong.calls >= 1 and result.succeeded
    assert strong.requests[0].call.repeats >= 1


# -- results and scorecards ------------------------------------------------------------


def test_usage_per_model_in_trial_results_and_scorecards() -> None:
    usage = {"cheap": {"rung": 0, "calls": 4, "prompt_tokens": 40, "completion_tokens": 8,
                       "cached_prompt_tokens": 0, "seconds": 1.5, "escalations": 0},
             "strong": {"rung": 1, "calls": 1, "prompt_tokens": 10, "completion_tokens": 2,
                        "cached_prompt_tokens": 0, "seconds": 3.0, "escalations": 1}}  # fmt: skip
    trials = [
        TrialResult(key=str(i), problem=str(i), method="astar", trial=0, budget=10,
                    model="ladder", succeeded=True, termination="success", calls=5,
                    prompt_tokens=50, completion_tokens=10, cached_prompt_tokens=0,
                    seconds=4.5, models=usage)
        for i in range(2)
    ]  # fmt: skip
    again = TrialResult.from_dict(json.loads(json.dumps(trials[0].as_dict())))
    assert again.models == usage
    figures = summarize(trials)
    assert figures["per_model"]["strong"]["calls"] == 2
    assert figures["per_model"]["strong"]["escalations"] == 2
    assert figures["per_model"]["cheap"]["seconds"] == 3.0
    card = build_scorecard(
        trials, methods=["astar"], problems=["0", "1"], budgets=[10], derived={}, meta={}
    )
    assert card["methods"]["astar"]["per_model"] == figures["per_model"]
    text = markdown(card)
    assert "## Per model (model ladders)" in text and "| astar | strong | 2 |" in text
    assert merge_model_usage([]) == {}


# -- caches ------------------------------------------------------------------------------


async def test_a_cache_in_front_of_a_ladder_keeps_each_models_answer_apart() -> None:
    ladder, cheap, strong = two(after=1)
    cached = CachedModel(ladder)
    first, escalated = ask(), ask(CallInfo(rejections=1))
    assert first.digest() == escalated.digest()  # CallInfo is not part of the request
    assert ladder.request_digest(first) == first.digest()  # the first rung: keys unchanged
    assert (await cached.complete(first)).text == "cheap"
    assert (await cached.complete(escalated)).text == "strong"
    assert (await cached.complete(first)).text == "cheap" and cached.hits == 1
    assert (cheap.calls, strong.calls) == (1, 1)


# -- local models: one at a time, memory ----------------------------------------------------


@dataclass
class FakeLocal:
    """A local model: loads on first call, can be unloaded; records overlapping calls."""

    name: str
    path: Path
    active: list[str] = field(default_factory=list)
    overlaps: int = 0
    loads: int = 0
    _loaded: bool = False

    @property
    def loaded(self) -> bool:
        return self._loaded

    def unload(self) -> None:
        self._loaded = False

    def count_tokens(self, request: ModelRequest) -> int:
        self._loaded, self.loads = True, self.loads + (not self._loaded)
        return 1

    async def complete(self, request: ModelRequest) -> Completion:
        if not self._loaded:
            self._loaded, self.loads = True, self.loads + 1
        self.active.append(self.name)
        if len(self.active) > 1:
            self.overlaps += 1
        await asyncio.sleep(0.01)
        self.active.remove(self.name)
        return Completion(text=self.name)


def locals_(tmp_path: Path) -> tuple[FakeLocal, FakeLocal]:
    active: list[str] = []
    (tmp_path / "a.gguf").write_bytes(b"x" * 100)
    (tmp_path / "b.gguf").write_bytes(b"x" * 300)
    return (
        FakeLocal("small", tmp_path / "a.gguf", active),
        FakeLocal("big", tmp_path / "b.gguf", active),
    )


async def test_swap_keeps_one_local_model_in_memory(tmp_path: Path) -> None:
    small, big = locals_(tmp_path)
    ladder = ModelLadder([small, big], after=1, memory="swap")
    assert (await ladder.complete(ask())).model == "small"
    assert small.loaded and not big.loaded
    await ladder.complete(ask(CallInfo(rejections=1)))
    assert big.loaded and not small.loaded and ladder.swaps == 1
    await ladder.complete(ask())
    assert small.loaded and not big.loaded and small.loads == 2


async def test_swap_unloads_the_others_when_both_were_already_loaded(tmp_path: Path) -> None:
    # Rungs are cached per process: another ladder may have loaded both models.
    small, big = locals_(tmp_path)
    small._loaded = big._loaded = True
    ladder = ModelLadder([small, big], after=1, memory="swap")
    await ladder.complete(ask(CallInfo(rejections=1)))
    assert big.loaded and not small.loaded and ladder.swaps == 1


async def test_keep_and_auto_with_room_keep_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for memory, free in (("keep", 0), ("auto", 10**12)):
        small, big = locals_(tmp_path)
        monkeypatch.setattr(ladder_module, "available_ram", lambda free=free: free)
        ladder = ModelLadder([small, big], after=1, memory=memory)  # type: ignore[arg-type]
        await ladder.complete(ask())
        await ladder.complete(ask(CallInfo(rejections=1)))
        assert small.loaded and big.loaded and ladder.swaps == 0


async def test_auto_swaps_when_ram_is_short(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small, big = locals_(tmp_path)
    monkeypatch.setattr(ladder_module, "available_ram", lambda: 1000)
    ladder = ModelLadder([small, big], after=1)
    await ladder.complete(ask())
    await ladder.complete(ask(CallInfo(rejections=1)))
    assert big.loaded and not small.loaded and ladder.swaps == 1


async def test_local_models_compute_one_at_a_time(tmp_path: Path) -> None:
    small, big = locals_(tmp_path)
    ladder = ModelLadder([small, big], after=1, memory="keep")
    requests = [ask(CallInfo(rejections=i % 2), text=str(i)) for i in range(6)]
    answers = await asyncio.gather(*(ladder.complete(r) for r in requests))
    assert [a.text for a in answers] == ["small", "big"] * 3
    assert small.overlaps == 0 and big.overlaps == 0


def test_counting_tokens_does_not_load_a_model_that_is_not_loaded(tmp_path: Path) -> None:
    small, big = locals_(tmp_path)
    ladder = ModelLadder([small, big], after=1, memory="swap")
    assert ladder.count_tokens(ask(CallInfo(rejections=1))) > 1  # the byte bound
    assert not big.loaded


# -- specs --------------------------------------------------------------------------------


def scripted_file(tmp_path: Path, name: str, answers: list[str]) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(answers), "utf-8")
    return str(path)


def test_a_ladder_spec(tmp_path: Path) -> None:
    a = scripted_file(tmp_path, "a", ["a"])
    b = scripted_file(tmp_path, "b", ["b"])
    spec = f"ladder:scripted:{a},scripted:{b}?after=3&repeat=2&on=tests|schema&code=2&memory=keep"
    ladder = model_from_spec(spec)
    assert isinstance(ladder, ModelLadder) and ladder.name == spec
    assert [m.name for m in ladder.rungs] == [f"scripted:{a}", f"scripted:{b}"]
    assert (ladder.after, ladder.repeat, ladder.memory) == (3, 2, "keep")
    assert ladder.on == {"tests", "schema"} and ladder.roles == {"code": 1}
    assert model_from_spec(f"ladder:scripted:{a},scripted:{b}").after == 2  # type: ignore[attr-defined]


def test_a_rungs_own_options_stay_with_it() -> None:
    rungs, options = split_ladder("s", "embedded, embedded:1.5b?extra_bufts=off&after=1")
    assert rungs == ["embedded", "embedded:1.5b?extra_bufts=off"] and options == {"after": 1}
    assert split_ladder("s", "embedded,embedded:1.5b") == (["embedded", "embedded:1.5b"], {})


@pytest.mark.parametrize(
    ("rest", "message"),
    [
        ("embedded", "two or more models"),
        ("embedded,", "two or more models"),
        ("embedded,,embedded:1.5b", "two or more models"),
        ("embedded,embedded:1.5b?after=x", "after='x'"),
        ("embedded,embedded:1.5b?after=-1", "whole number >= 0"),
        ("embedded,embedded:1.5b?judge=3", "there are 2 models"),
        ("embedded,embedded:1.5b?judge=0", "whole number >= 1"),
        ("embedded,embedded:1.5b?memory=lots", "memory='lots'"),
        ("embedded,embedded:1.5b?after", "needs a value"),
        ("embedded,ladder:embedded,embedded:1.5b", "cannot be ladders"),
    ],
)
def test_bad_ladder_specs_say_what_is_wrong(rest: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        model_from_spec(f"ladder:{rest}")


def test_bad_ladders_built_in_python_are_refused() -> None:
    one = ScriptedModel(["x"])
    with pytest.raises(ConfigError, match="at least two"):
        ModelLadder([one])
    with pytest.raises(ConfigError, match="unknown call role"):
        ModelLadder([one, one], roles={"boss": 0})
    with pytest.raises(ConfigError, match="after must be"):
        ModelLadder([one, one], after=-1)
    with pytest.raises(ConfigError, match="memory must be"):
        ModelLadder([one, one], memory="lots")  # type: ignore[arg-type]


async def test_a_step_escalates_on_a_named_verdict() -> None:
    cheap = ScriptedModel(lambda r: "bad", name="cheap")
    strong = ScriptedModel(lambda r: "good", name="strong")
    ladder = ModelLadder([cheap, strong], after=0, on=frozenset({"tests"}))

    def guard(value: str) -> GuardResult:
        return GuardResult.ok("tests") if value == "good" else GuardResult.fail("no", "tests")

    step = Step(name="s", prompt="p", guard=guard, rmax=3)
    outcome = await run_step(step, Context(objective="o"), Metered(ladder))
    assert outcome.attempts == 2 and strong.requests[0].call.verdicts == ("tests",)


def test_a_nodes_repeats_survive_a_checkpoint() -> None:
    from guardsearch.search.node import Node
    from guardsearch.search.serialize import node_from_dict, node_to_dict

    ctx = Context(objective="o")
    node = Node(id="n0", parent=None, depth=0, state=[], key="k", context=ctx, repeats=3)
    saved = node_to_dict(node, 0)
    assert saved["repeats"] == 3 and node_from_dict(saved, [ctx]).repeats == 3
    node.repeats = 0
    assert "repeats" not in node_to_dict(node, 0)  # states saved before the field: unchanged
