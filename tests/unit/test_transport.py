"""PipeTransport (NUL-framed CDP over OS pipes) against a fake browser on the other ends."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import orjson
import pytest
import trio
import trio.testing

from browserd.cdp.connection import open_cdp_over
from browserd.cdp.transport import PipeTransport
from browserd.errors import BrowserGone


@asynccontextmanager
async def pipe_pair(max_bytes: int = 1 << 20) -> AsyncIterator[tuple[PipeTransport, int, int]]:
    """Our transport, plus the fake browser's ends: (transport, browser_reads, browser_writes)."""
    browser_in, ours_write = os.pipe()
    ours_read, browser_out = os.pipe()
    transport = PipeTransport(ours_write, ours_read, max_message_bytes=max_bytes)
    try:
        yield transport, browser_in, browser_out
    finally:
        await transport.aclose()
        for fd in (browser_in, browser_out):
            try:
                os.close(fd)
            except OSError:
                pass


async def test_messages_are_split_on_nul_across_partial_reads() -> None:
    with trio.fail_after(5):
        async with pipe_pair() as (transport, _, browser_out):
            os.write(browser_out, b'{"id":1}\0{"id"')
            assert await transport.receive() == b'{"id":1}'
            async with trio.open_nursery() as nursery:
                got: list[bytes] = []

                async def read() -> None:
                    got.append(await transport.receive())

                nursery.start_soon(read)
                await trio.testing.wait_all_tasks_blocked()
                assert got == []  # half a message is not a message
                os.write(browser_out, b':2}\0')
            assert got == [b'{"id":2}']


async def test_one_read_of_many_messages_gives_them_all_in_order() -> None:
    with trio.fail_after(5):
        async with pipe_pair() as (transport, _, browser_out):
            os.write(browser_out, b"".join(b'{"id":%d}\0' % i for i in range(200)) + b'{"id"')
            got = [await transport.receive() for _ in range(200)]
            assert got == [b'{"id":%d}' % i for i in range(200)]
            os.write(browser_out, b":200}\0")  # the tail held from the first read
            assert await transport.receive() == b'{"id":200}'


async def test_a_too_long_message_that_ends_in_the_read_is_browser_gone() -> None:
    with trio.fail_after(5):
        async with pipe_pair(max_bytes=1000) as (transport, _, browser_out):
            os.write(browser_out, b"x" * 600)
            os.write(browser_out, b"y" * 600 + b"\0{}\0")
            with pytest.raises(BrowserGone, match="larger than 1000"):
                while True:
                    await transport.receive()


async def test_send_appends_one_nul_and_writes_whole_messages() -> None:
    with trio.fail_after(5):
        async with pipe_pair() as (transport, browser_in, _):
            data = b""

            async def fake_browser_reads() -> None:
                nonlocal data
                while data.count(b"\0") < 20:
                    await trio.lowlevel.wait_readable(browser_in)
                    data += os.read(browser_in, 1 << 20)

            async with trio.open_nursery() as nursery:
                nursery.start_soon(fake_browser_reads)
                for i in range(20):  # 180 KB in all: more than a pipe holds
                    nursery.start_soon(transport.send, orjson.dumps({"id": i, "pad": "x" * 9000}))
            frames = data.split(b"\0")[:-1]
            assert sorted(orjson.loads(f)["id"] for f in frames) == list(range(20))
            with pytest.raises(ValueError):
                await transport.send(b"a\0b")


async def test_eof_and_oversize_are_browser_gone() -> None:
    with trio.fail_after(5):
        async with pipe_pair(max_bytes=1000) as (transport, _, browser_out):
            os.write(browser_out, b"x" * 2000)
            with pytest.raises(BrowserGone, match="larger than 1000"):
                await transport.receive()
        async with pipe_pair() as (transport, _, browser_out):
            os.write(browser_out, b'{"id":1}\0')
            os.close(browser_out)
            assert await transport.receive() == b'{"id":1}'
            with pytest.raises(BrowserGone):
                await transport.receive()
            await transport.aclose()
            await transport.aclose()  # idempotent
            with pytest.raises(BrowserGone):
                await transport.send(b"{}")


async def test_connection_over_the_pipe_sends_commands_and_keeps_the_pipe_it_borrows() -> None:
    with trio.fail_after(5):
        async with pipe_pair() as (transport, browser_in, browser_out):

            async def fake_browser() -> None:
                buf = b""
                while b"\0" not in buf:
                    await trio.lowlevel.wait_readable(browser_in)
                    buf += os.read(browser_in, 65536)
                request = orjson.loads(buf.split(b"\0")[0])
                assert request["method"] == "Browser.getVersion"
                os.write(browser_out, b'{"method":"Target.x","params":{}}\0')
                os.write(browser_out, orjson.dumps({"id": request["id"],
                                                    "result": {"product": "P"}}) + b"\0")

            async with trio.open_nursery() as nursery:
                nursery.start_soon(fake_browser)
                async with open_cdp_over(transport, "pipe", close_transport=False) as conn:
                    assert await conn.send("Browser.getVersion") == {"product": "P"}
            # The connection is gone; the pipe (the browser's lifeline) is not.
            await transport.send(b'{"id":99,"method":"Browser.close"}')
            assert os.read(browser_in, 1000).endswith(b"Browser.close\"}\0")
