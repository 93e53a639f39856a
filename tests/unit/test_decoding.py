"""Decoding Chromium's JSON: lone surrogates become U+FFFD, no message is dropped."""

from __future__ import annotations

import orjson
import pytest

from browserd import jsontext as decoding
from browserd.cdp.protocol import Protocol
from browserd.errors import CdpError, CdpUndecodable

# Chromium's own bytes for 'a\ud800b\udc00c' and '\ud83d\ude00' (measured, both transports).
LONE = rb'{"id":4,"result":{"result":{"type":"string","value":"a\ud800b\udc00c"}},"sessionId":"S"}'
PAIR = rb'{"id":5,"result":{"result":{"type":"string","value":"x\ud83d\ude00y"}}}'


def test_clean_json_takes_the_fast_path_unchanged() -> None:
    assert decoding.loads(PAIR)["result"]["result"]["value"] == "x\U0001f600y"
    assert decoding.loads('{"a": "\\u00e9"}') == {"a": "é"}


def test_lone_surrogate_escapes_become_replacement_characters() -> None:
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(LONE)
    message = decoding.loads(LONE)
    assert message["result"]["result"]["value"] == "a\ufffdb\ufffdc"
    assert message["sessionId"] == "S"


@pytest.mark.parametrize(("escaped", "expected"), [
    (rb'"\ud800"', "\ufffd"),
    (rb'"\uDBFF\uDFFF"', "\U0010ffff"),          # a pair, upper case
    (rb'"\udc00\ud800"', "\ufffd\ufffd"),         # low then high: both lone
    (rb'"\ud800\ud800\udc00"', "\ufffd\U00010000"),
    (rb'"\\ud800"', "\\ud800"),                   # an escaped backslash, then text
    (rb'"\\\ud800"', "\\\ufffd"),                 # backslash, then a lone escape
    (rb'{"\ud800": 1}', {"\ufffd": 1}),           # keys too
    (rb'"\ud800\n\udfff"', "\ufffd\n\ufffd"),
])
def test_repair_is_exact_about_escapes(escaped: bytes, expected: object) -> None:
    assert decoding.loads(escaped) == expected


def test_invalid_utf8_bytes_become_replacement_characters() -> None:
    # CESU-8 for U+D800 (what a raw-bytes transport could send): never fatal.
    assert decoding.loads(b'{"v": "a\xed\xa0\x80b"}')["v"].startswith("a\ufffd")
    assert decoding.loads('{"v": "a\ud800b"}')["v"].startswith("a\ufffd")


def test_json_that_stays_broken_raises_and_names_its_id() -> None:
    with pytest.raises(decoding.UndecodableMessage):
        decoding.loads(b'{"id":17,"result":{"value":"unterminated')
    assert decoding.reply_id(b'{"id":17,"result":{"value":"unterminated') == 17
    assert decoding.reply_id(b' { "id" : 3 }') == 3
    assert decoding.reply_id(b'{"method":"X","params":{"id":3}') is None


def test_dumps_repairs_strings_holding_lone_surrogates() -> None:
    with pytest.raises(orjson.JSONEncodeError):
        orjson.dumps({"t": "a\ud800"})
    assert orjson.loads(decoding.dumps({"t": ["a\ud800"], "\udfff": 1})) == {
        "t": ["a\ufffd"], "\ufffd": 1}


def test_a_big_message_with_many_escapes_is_repaired_in_one_pass() -> None:
    text = b"\\ud800\\u00e9\\\\" * 200_000  # 2.6 MB of escapes
    value = decoding.loads(b'"' + text + b'"')
    assert value == "\ufffdé\\" * 200_000


def test_protocol_delivers_replies_and_events_with_lone_surrogates() -> None:
    proto = Protocol()
    sub = proto.subscribe("S")
    call, call_id, _ = proto.encode("Runtime.evaluate", None, "S")
    proto.receive(LONE.replace(b'"id":4', b'"id":%d' % call_id))
    assert call.unwrap()["result"]["value"] == "a\ufffdb\ufffdc"
    proto.receive(rb'{"method":"Runtime.consoleAPICalled","params":{"args":'
                  rb'[{"type":"string","value":"c\ud800"}]},"sessionId":"S"}')
    event = sub._recv.receive_nowait()
    assert event.params["args"][0]["value"] == "c\ufffd"
    assert proto.statistics().undecodable == 0


def test_an_undecodable_reply_fails_its_own_command_at_once() -> None:
    proto = Protocol()
    other, _, _ = proto.encode("Page.navigate", None, None)
    call, call_id, _ = proto.encode("DOM.getDocument", None, None)
    proto.receive(b'{"id":%d,"result":{"value":"cut' % call_id)
    assert call.done.is_set() and not other.done.is_set()
    with pytest.raises(CdpUndecodable) as info:
        call.unwrap()
    assert isinstance(info.value, CdpError) and info.value.code == "CDP_UNDECODABLE"
    assert "DOM.getDocument" in info.value.message
    assert proto.statistics().undecodable == 1
    assert proto.statistics().pending == 1


def test_the_reply_id_is_read_from_the_first_64_bytes_only() -> None:
    assert decoding.reply_id(b" " * 56 + b'{"id":7}') == 7  # 64 bytes
    assert decoding.reply_id(b" " * 57 + b'{"id":7}') is None  # its "}" is the 65th


def test_bytes_holding_the_repairs_own_marks_are_left_alone() -> None:
    for mark in (b"\x00", b"\x01", b"\x02"):
        data = b'"\\ud800' + mark + b'\\\\"'
        assert decoding.repair_surrogate_escapes(data) == data
    assert decoding.repair_surrogate_escapes(b'"plain"') == b'"plain"'
