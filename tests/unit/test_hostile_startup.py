"""Startup holes: a config path that is not a regular file is a clear error, never a hang."""

from __future__ import annotations

import gc
import logging
import os
import socket
import warnings
from pathlib import Path

import pytest
import trio

from browserd.config import load_settings, read_config_keys
from browserd.errors import ConfigError
from browserd.paths import Paths


@pytest.fixture
def paths(tmp_path: Path) -> Paths:
    return Paths.resolve({"BROWSERD_HOME": str(tmp_path)})


async def test_a_fifo_as_config_is_a_clear_error_not_a_hang(paths: Paths) -> None:
    paths.config_dir.mkdir(parents=True)
    os.mkfifo(paths.config_file)
    with trio.fail_after(10):  # a blocking open of a FIFO would hang here forever
        with pytest.raises(ConfigError, match="not a regular file"):
            await trio.to_thread.run_sync(lambda: load_settings(paths, environ={}),
                                          abandon_on_cancel=True)
    assert read_config_keys(paths.config_file) == []


def test_a_directory_as_config_is_a_clear_error(paths: Paths) -> None:
    paths.config_file.mkdir(parents=True)
    with pytest.raises(ConfigError, match="not a regular file"):
        load_settings(paths, environ={})


def test_a_regular_config_still_loads_and_a_huge_one_is_refused(paths: Paths) -> None:
    paths.config_dir.mkdir(parents=True)
    paths.config_file.write_text('profile = "work"\n')
    assert load_settings(paths, environ={}).profile == "work"
    paths.config_file.write_text("# pad\n" * 200_000)
    with pytest.raises(ConfigError, match="larger than 1 MiB"):
        load_settings(paths, environ={})
    paths.config_file.write_bytes(b'profile = "\xff"\n')
    with pytest.raises(ConfigError, match="cannot read"):
        load_settings(paths, environ={})


def test_losing_the_bind_race_is_one_line_not_a_group(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    # Two services passed the port check together; the second one's bind fails.
    from browserd import service

    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    monkeypatch.setenv("BROWSERD_HOME", str(tmp_path))
    monkeypatch.setenv("BROWSERD_AUTO_START", "0")
    monkeypatch.setenv("BROWSERD_CONTROL_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setattr(service, "port_is_free", lambda *_: True)
    monkeypatch.setattr(service, "configure_logging", lambda *_, **__: None)
    try:
        with caplog.at_level(logging.ERROR, logger="browserd"):
            assert service.serve() == 1
    finally:
        holder.close()
        # hypercorn leaves the socket it failed to bind to the garbage collector.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            gc.collect()
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and errors[0].exc_info is None
    assert f"control port {port} is already in use" in errors[0].getMessage()
