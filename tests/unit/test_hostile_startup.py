"""Startup holes: a config path that is not a regular file, two services on one home."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import trio

from browserd.config import load_settings, read_config_keys
from browserd.errors import AlreadyRunning, ConfigError, StartupError
from browserd.instance_lock import hold_instance_lock, lock_path
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


def test_the_instance_lock_admits_one_holder_at_a_time(paths: Paths) -> None:
    with hold_instance_lock(paths) as path:
        assert path == lock_path(paths)
        assert path.read_text().strip() == str(os.getpid())
        # Another process (not another fd of ours: flock locks are per open file).
        home = str(paths.data_dir.parent)
        code = textwrap.dedent(f"""
            import sys
            from browserd.errors import AlreadyRunning
            from browserd.instance_lock import hold_instance_lock
            from browserd.paths import Paths
            try:
                with hold_instance_lock(Paths.resolve({{"BROWSERD_HOME": {home!r}}})):
                    sys.exit(0)
            except AlreadyRunning as exc:
                print(exc.message)
                sys.exit(3)
        """)
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=30)
        assert done.returncode == 3, done.stderr
        assert f"pid {os.getpid()}" in done.stdout
    with hold_instance_lock(paths):  # released on exit: free again
        pass
    assert issubclass(AlreadyRunning, StartupError)
