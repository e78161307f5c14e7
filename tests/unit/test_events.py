"""Events: an append-only trace with subscribers; the JSONL sink survives a killed writer."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from guardsearch import Event, Trace
from guardsearch.jsonl import JsonlSink, read_events


def test_events_are_numbered_in_the_order_they_happen() -> None:
    trace = Trace()
    trace.emit("run_start")
    trace.emit("note", message="hello")
    trace.emit("run_end")
    assert [(e.seq, e.kind) for e in trace.events] == [
        (0, "run_start"),
        (1, "note"),
        (2, "run_end"),
    ]


def test_an_event_records_its_time_place_and_data() -> None:
    trace = Trace(clock=lambda: 42.0)
    event = trace.emit("retry", step="plan", node="n7", attempt=2)
    assert (event.at, event.step, event.node, event.data) == (42.0, "plan", "n7", {"attempt": 2})


def test_the_trace_is_append_only_from_outside() -> None:
    trace = Trace()
    trace.emit("note")
    events = trace.events
    assert isinstance(events, tuple)
    trace.emit("note")
    assert len(events) == 1
    assert len(trace) == 2


def test_an_event_is_frozen() -> None:
    event = Trace().emit("note")
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.kind = "run_end"  # type: ignore[misc]


def test_subscribers_are_called_with_every_event_as_it_is_emitted() -> None:
    trace = Trace()
    seen: list[Event] = []
    trace.subscribe(seen.append)
    first = trace.emit("run_start")
    second = trace.emit("run_end")
    assert seen == [first, second]


def test_of_kind_selects_events_by_kind() -> None:
    trace = Trace()
    trace.emit("note", n=1)
    trace.emit("retry")
    trace.emit("note", n=2)
    assert [e.data["n"] for e in trace.of_kind("note")] == [1, 2]


def test_the_jsonl_sink_writes_one_json_object_per_event(tmp_path: Path) -> None:
    path = tmp_path / "run" / "events.jsonl"
    sink = JsonlSink(path)
    trace = Trace(clock=lambda: 1.5)
    trace.subscribe(sink)
    trace.emit("note", step="s", message="héllo")
    trace.emit("run_end")
    sink.close()
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [e.as_dict() for e in trace.events]


def test_the_jsonl_sink_flushes_each_event_as_it_happens(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    sink = JsonlSink(path)
    trace = Trace()
    trace.subscribe(sink)
    trace.emit("note")
    assert len(read_events(path)) == 1  # readable before the sink is closed
    sink.close()


def test_read_events_skips_a_torn_last_line(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    sink = JsonlSink(path)
    sink(Trace().emit("run_start"))
    sink.close()
    with path.open("a") as fh:
        fh.write('{"seq": 1, "kind": "no')
    assert [e["kind"] for e in read_events(path)] == ["run_start"]


def test_a_corrupt_middle_line_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text('{"seq": 0}\nnot json\n{"seq": 2}\n')
    with pytest.raises(ValueError):
        read_events(path)


def test_a_sink_reopened_after_a_torn_last_line_keeps_the_trace_readable(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    first = JsonlSink(path)
    first(Trace().emit("run_start"))
    first.close()
    with path.open("a") as fh:
        fh.write('{"seq": 1, "kind": "no')  # the writer was killed here
    resumed = JsonlSink(path)
    trace = Trace()
    trace.subscribe(resumed)
    trace.emit("run_start")
    trace.emit("run_end")
    resumed.close()
    assert [e["kind"] for e in read_events(path)] == ["run_start", "run_start", "run_end"]


def test_a_torn_last_line_cut_inside_a_character_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    sink = JsonlSink(path)
    sink(Trace().emit("run_start"))
    sink.close()
    with path.open("ab") as fh:
        fh.write('{"seq": 1, "kind": "note", "data": {"m": "é'.encode()[:-1])
    assert [e["kind"] for e in read_events(path)] == ["run_start"]


def test_events_with_unicode_line_separators_read_back_intact(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    sink = JsonlSink(path)
    trace = Trace()
    trace.subscribe(sink)
    trace.emit("note", message="one\u2028two\u2029three\x85four")
    trace.emit("run_end")
    sink.close()
    assert read_events(path) == [e.as_dict() for e in trace.events]


def test_an_event_with_an_unpaired_surrogate_is_written_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    sink = JsonlSink(path)
    trace = Trace()
    trace.subscribe(sink)
    trace.emit("note", message="half an emoji \ud83d", other="héllo")
    sink.close()
    assert read_events(path) == [e.as_dict() for e in trace.events]


def test_an_event_a_subscriber_emits_reaches_everyone_after_the_one_it_reacts_to() -> None:
    trace = Trace()
    seen: dict[str, list[int]] = {"first": [], "second": []}

    def first(event: Event) -> None:
        seen["first"].append(event.seq)
        if event.kind == "run_start":
            trace.emit("note", message="reacting")

    trace.subscribe(first)
    trace.subscribe(lambda event: seen["second"].append(event.seq))
    trace.emit("run_start")
    trace.emit("run_end")
    assert seen == {"first": [0, 1, 2], "second": [0, 1, 2]}
    assert [e.kind for e in trace.events] == ["run_start", "note", "run_end"]


def test_a_trace_observer_sees_every_new_trace_until_it_stops() -> None:
    from guardsearch.core.events import watch_traces

    made: list[Trace] = []
    unwatch = watch_traces(made.append)
    try:
        trace = Trace()
    finally:
        unwatch()
    Trace()
    assert made == [trace]
