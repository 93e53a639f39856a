"""The tab's typed state objects, as plain code: RefMap, ConsoleLog, LoadState."""

from __future__ import annotations

import pytest

from browserd.tabs.state import ConsoleEntry, ConsoleLog, LoadState, RefMap, World


def nodes(*refs: str) -> list[dict[str, str]]:
    return [{"ref": r, "role": "button", "name": f"n{r}"} for r in refs]


def test_recorded_refs_remember_their_frame_document_and_session() -> None:
    refs = RefMap()
    refs.record(nodes("e1", "e2"), frame_id="F", loader_id="L1", session_id=None)
    refs.record([{"ref": "e3"}, {"no": "ref"}], frame_id="C", loader_id="L9", session_id="S2")
    one = refs.get("e1")
    assert one is not None and (one.frame_id, one.loader_id, one.session_id) == ("F", "L1", None)
    assert (one.role, one.name) == ("button", "ne1")
    three = refs.get("e3")
    assert three is not None and (three.session_id, three.role, three.name) == ("S2", "generic", "")
    assert len(refs) == 3 and refs.get("e4") is None and refs.gone_reason("e4") is None


def test_over_the_cap_the_least_recently_listed_refs_are_forgotten_as_detached() -> None:
    refs = RefMap(refs_cap=3)
    refs.record(nodes("e1", "e2", "e3"), frame_id="F", loader_id="L", session_id=None)
    refs.record(nodes("e1"), frame_id="F", loader_id="L", session_id=None)  # listed again
    refs.record(nodes("e4"), frame_id="F", loader_id="L", session_id=None)
    assert refs.get("e2") is None and refs.gone_reason("e2") == "detached"
    assert refs.get("e1") is not None and refs.get("e3") is not None
    refs.record(nodes("e2"), frame_id="F", loader_id="L", session_id=None)  # back again
    assert refs.gone_reason("e2") is None and refs.get("e2") is not None


class Documents:
    """What a tab's actor knows for its RefMap: each in-process frame's current document
    (loaderId) and the out-of-process frames' sessions still attached."""

    def __init__(self, loaders: dict[str, str], sessions: set[str]) -> None:
        self.loaders, self.sessions = loaders, sessions

    def alive(self, session_id: str | None, frame_id: str, loader_id: str) -> bool:
        if session_id is None:
            return self.loaders.get(frame_id) == loader_id
        return session_id in self.sessions


def test_prune_moves_refs_of_gone_documents_to_navigated_and_drops_their_worlds() -> None:
    docs = Documents({"F": "L1", "G": "L5"}, {"S-oopif"})
    refs = RefMap(alive=docs.alive)
    refs.record(nodes("e1"), frame_id="F", loader_id="L1", session_id=None)
    refs.record(nodes("e2"), frame_id="G", loader_id="L5", session_id=None)
    refs.record(nodes("e3"), frame_id="O", loader_id="L7", session_id="S-oopif")
    refs.set_world((None, "F"), World(loader_id="L1", context_id=1))
    refs.set_world(("S-oopif", "O"), World(loader_id="L7", context_id=2))
    docs.loaders["F"] = "L2"  # F navigated, the OOPIF detached
    docs.sessions.clear()
    refs.prune()
    assert refs.gone_reason("e1") == "navigated" and refs.gone_reason("e3") == "navigated"
    assert refs.get("e2") is not None
    assert refs.world((None, "F")) is None and refs.world(("S-oopif", "O")) is None


def test_prune_keeps_what_is_still_there_and_looks_only_where_it_is_told() -> None:
    docs = Documents({"F": "L1", "G": "L3"}, {"S-live", "S-gone"})
    refs = RefMap(alive=docs.alive)
    refs.record(nodes("e1"), frame_id="F", loader_id="L1", session_id=None)
    refs.record(nodes("e2"), frame_id="O", loader_id="L7", session_id="S-live")
    refs.record(nodes("e3"), frame_id="P", loader_id="L8", session_id="S-gone")
    refs.record(nodes("e4"), frame_id="G", loader_id="L3", session_id=None)
    refs.set_world((None, "F"), World(loader_id="L1", context_id=1))
    refs.set_world(("S-live", "O"), World(loader_id="L7", context_id=2))
    refs.set_world(("S-gone", "P"), World(loader_id="L8", context_id=3))
    docs.sessions.discard("S-gone")
    docs.loaders["G"] = "L4"
    refs.prune([(None, "F"), ("S-live", "O"), ("S-gone", "P")])  # G is not looked at
    assert refs.get("e1") is not None and refs.get("e2") is not None
    assert refs.get("e3") is None and refs.gone_reason("e3") == "navigated"
    assert refs.world((None, "F")) is not None and refs.world(("S-live", "O")) is not None
    assert refs.world(("S-gone", "P")) is None
    assert refs.get("e4") is not None
    refs.prune([(None, "G")])
    assert refs.get("e4") is None and refs.gone_reason("e4") == "navigated"


def test_refs_and_worlds_of_a_document_already_gone_are_never_kept() -> None:
    docs = Documents({"F": "L2"}, set())
    refs = RefMap(alive=docs.alive)
    refs.record(nodes("e1", "e2"), frame_id="F", loader_id="L1", session_id=None)
    refs.record(nodes("e3"), frame_id="O", loader_id="L7", session_id="S-gone")
    assert len(refs) == 0
    assert [refs.gone_reason(r) for r in ("e1", "e2", "e3")] == ["navigated"] * 3
    refs.set_world((None, "F"), World(loader_id="L1", context_id=1))
    assert refs.world((None, "F")) is None
    refs.set_world((None, "F"), World(loader_id="L2", context_id=2))
    assert refs.world((None, "F")) is not None


def test_refs_forgotten_over_the_cap_keep_the_gone_list_bounded() -> None:
    refs = RefMap(refs_cap=1, gone_cap=2)
    refs.record(nodes("e1", "e2", "e3", "e4", "e5"), frame_id="F", loader_id="L",
                session_id=None)
    assert [refs.gone_reason(r) for r in ("e1", "e2", "e3", "e4")] == [
        None, None, "detached", "detached"]
    assert refs.get("e5") is not None


def test_the_gone_list_is_bounded() -> None:
    docs = Documents({"F": "L1"}, set())
    refs = RefMap(alive=docs.alive, gone_cap=2)
    refs.record(nodes("e1", "e2", "e3"), frame_id="F", loader_id="L1", session_id=None)
    docs.loaders["F"] = "L2"
    refs.prune()
    assert [refs.gone_reason(r) for r in ("e1", "e2", "e3")] == [None, "navigated", "navigated"]


def test_counters_only_move_forward() -> None:
    refs = RefMap()
    assert refs.next_ref == 1  # a tab's first ref is e1
    refs.advance(10)
    refs.advance(4)
    assert refs.next_ref == 10
    assert [refs.next_snapshot_id() for _ in range(3)] == ["s1", "s2", "s3"]


def test_worlds_are_cached_and_dropped_by_key() -> None:
    refs = RefMap()
    refs.set_world((None, "F"), World(loader_id="L", context_id=7))
    world = refs.world((None, "F"))
    assert world is not None and world.context_id == 7
    refs.drop_world((None, "F"))
    refs.drop_world((None, "F"))  # absent is fine
    assert refs.world((None, "F")) is None


def entry(i: int) -> ConsoleEntry:
    return ConsoleEntry(level="log", text=str(i), url=None, line=None, timestamp=0.0,
                        source="console")


def test_console_log_is_a_ring_that_says_when_it_is_full() -> None:
    log = ConsoleLog(capacity=3)
    for i in range(2):
        log.append(entry(i))
    assert not log.full and [e.text for e in log.entries()] == ["0", "1"]
    for i in range(2, 5):
        log.append(entry(i))
    assert log.full and [e.text for e in log.entries()] == ["2", "3", "4"]
    log.clear()
    assert len(log) == 0 and not log.full


@pytest.mark.parametrize(("state", "rank"), [
    (LoadState.NONE, -1), (LoadState.LOADING, 0), (LoadState.DOMCONTENTLOADED, 1),
    (LoadState.LOAD, 2)])
def test_load_states_are_ranked_and_spelled_as_the_api_spells_them(
        state: LoadState, rank: int) -> None:
    assert state.rank == rank
    assert LoadState(state.value) is state and state == state.value


@pytest.mark.parametrize(("ready", "state"), [
    ("loading", LoadState.LOADING), ("interactive", LoadState.DOMCONTENTLOADED),
    ("complete", LoadState.LOAD), ("prerender", None), (None, None), (2, None)])
def test_a_document_ready_state_maps_onto_a_load_state(ready: object,
                                                        state: LoadState | None) -> None:
    assert LoadState.from_ready_state(ready) is state
