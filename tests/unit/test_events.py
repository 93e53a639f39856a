"""The event hub and its SSE framing, without a browser (MockClock where time matters)."""

from __future__ import annotations

import orjson
import pytest
import trio
import trio.testing

from browserd.events import EventHub, EventType, parse_types, sse_comment, sse_event
from browserd.http.sse import HEARTBEAT_S, stream_events


def hub_with(n: int, ring: int = 1000) -> EventHub:
    hub = EventHub(ring_size=ring, clock=lambda: 1000.0)
    for i in range(n):
        hub.publish(EventType.TAB_OPENED, profile="p", target_id=f"T{i}")
    return hub


def drain(sub) -> list:  # type: ignore[no-untyped-def]
    out = []
    while (event := sub.next_nowait()) is not None:
        out.append(event)
    return out


def test_events_carry_id_type_profile_target_and_time() -> None:
    hub = EventHub(clock=lambda: 12.3456)
    event = hub.publish(EventType.DIALOG_OPENED, profile="work", target_id="AB",
                        message="hi")
    assert event.to_json() == {"id": 1, "type": "dialog.opened", "profile": "work",
                               "targetId": "AB", "at": 12.346, "message": "hi"}
    with pytest.raises(AssertionError):
        hub.publish(EventType.DIALOG_OPENED, profile="work", id=99)
    assert "targetId" not in hub.publish(EventType.BROWSER_STATE, profile="work").to_json()


def test_a_new_subscriber_gets_only_new_events_and_resumes_after_its_last_id() -> None:
    hub = hub_with(5)
    live = hub.subscribe()
    resumed = hub.subscribe(last_id=3)
    hub.publish(EventType.TAB_CLOSED, profile="p")
    assert [e.id for e in drain(live)] == [6]
    assert [e.id for e in drain(resumed)] == [4, 5, 6]


def test_resuming_beyond_the_ring_starts_with_events_lost() -> None:
    hub = hub_with(30, ring=10)  # the ring holds 21..30
    sub = hub.subscribe(last_id=5)
    events = drain(sub)
    assert events[0].type == EventType.EVENTS_LOST
    assert events[0].data == {"lastEventId": 5, "resumedFrom": 21}
    assert [e.id for e in events[1:]] == list(range(21, 31))
    exact = drain(hub.subscribe(last_id=20))  # 21 is the oldest: nothing was lost
    assert [e.id for e in exact] == list(range(21, 31))
    restarted = drain(hub.subscribe(last_id=500))  # an id from a previous run
    assert restarted[0].type == EventType.EVENTS_LOST and len(restarted) == 11


def test_type_and_profile_filters() -> None:
    hub = EventHub()
    tabs = hub.subscribe(types=parse_types(["tab.*", "dialog.opened"]))
    mine = hub.subscribe(profile="work")
    hub.publish(EventType.TAB_OPENED, profile="work")
    hub.publish(EventType.DIALOG_CLOSED, profile="work")
    hub.publish(EventType.DIALOG_OPENED, profile="home")
    hub.publish(EventType.CONSOLE_ERROR, profile="home")
    assert [e.type.value for e in drain(tabs)] == ["tab.opened", "dialog.opened"]
    assert [e.profile for e in drain(mine)] == ["work", "work"]
    with pytest.raises(ValueError):
        parse_types(["tab.bogus"])
    with pytest.raises(ValueError):
        parse_types(["nothing.*"])
    assert parse_types(["", " handoff.requested "]) == frozenset({"handoff.requested"})


def test_a_full_subscriber_is_dropped_and_the_others_go_on() -> None:
    hub = EventHub()
    slow = hub.subscribe(buffer=3)
    fast = hub.subscribe(buffer=100)
    for _ in range(5):
        hub.publish(EventType.CONSOLE_ERROR, profile="p")
    assert slow.dropped and hub.statistics().dropped == 1
    assert len(drain(slow)) == 3  # what it had queued, then the end
    assert len(drain(fast)) == 5 and not fast.dropped
    assert hub.statistics().subscribers == 1


async def test_closing_the_hub_ends_every_stream() -> None:
    hub = hub_with(2)
    sub = hub.subscribe()
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            got: list[object] = []

            async def read() -> None:
                got.append(await sub.receive())

            nursery.start_soon(read)
            await trio.testing.wait_all_tasks_blocked()
            hub.close()
        assert got == [None] and hub.closed
        assert await hub.subscribe().receive() is None
        await hub.wait_closed()


def test_sse_frames_keep_page_strings_on_one_data_line() -> None:
    hub = EventHub(clock=lambda: 1.0)
    nasty = "a\n\nevent: tab.closed\ndata: {}\r\nid: 7\rb\u2028c"
    frame = sse_event(hub.publish(EventType.CONSOLE_ERROR, profile="p", text=nasty))
    lines = frame.split(b"\n")
    assert lines[:2] == [b"id: 1", b"event: console.error"]
    assert lines[2].startswith(b"data: ") and lines[3:] == [b"", b""]
    assert b"\r" not in frame
    assert orjson.loads(lines[2][6:])["text"] == nasty
    assert sse_comment("x\ny") == b": x\\ny\n\n"
    lost = sse_event(drain(hub.subscribe(last_id=99))[0])
    assert lost.startswith(b"event: events.lost\n"), "events.lost has no id: it cannot move"


async def test_stream_events_batches_heartbeats_and_says_when_dropped(autojump_clock: object
                                                                     ) -> None:
    hub = EventHub()
    sub = hub.subscribe(buffer=4)
    writes: list[bytes] = []

    async def write(data: bytes) -> None:
        writes.append(data)

    with trio.fail_after(HEARTBEAT_S * 10):  # MockClock: instant
        async with trio.open_nursery() as nursery:
            nursery.start_soon(stream_events, sub, write)
            await trio.sleep(HEARTBEAT_S + 1)
            assert writes == [b": heartbeat\n\n"]
            for _ in range(3):
                hub.publish(EventType.TAB_OPENED, profile="p")
            await trio.testing.wait_all_tasks_blocked()
            assert writes[1].count(b"event: tab.opened") == 3, "one write for what was queued"
            for _ in range(6):  # nobody reads in between: the buffer of 4 overflows
                hub.publish(EventType.TAB_CLOSED, profile="p")
        assert sub.dropped
        assert writes[-1].startswith(b": dropped")

