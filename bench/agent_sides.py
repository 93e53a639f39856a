"""The three sides of :mod:`bench.agent_tasks_mcp`: how each is started and how its calls count.

- browserd: ``browserd mcp --caps core,page`` on stdio against a private
  service (:func:`browserd_mcp`), driven by the ``mcp`` Python client;
- Playwright MCP: ``@playwright/mcp`` on stdio (:func:`playwright_mcp`), the
  same client;
- agent-browser: its CLI (:func:`agent_browser_cli`), one process per call,
  against the daemon its first call starts (which launches Chromium).

Every call lands in the side's current :class:`Reading`: its name, the
characters the agent reads (an MCP result's text content; a CLI call's stdout
and stderr), its wall time, and whether it failed. A failure raises
:class:`ToolFailed` unless the path said ``may_fail``; then the text comes
back prefixed with ``ERROR``.

The JavaScript sides are installed for the bench only, from the npm registry,
into ``bench/js`` (:data:`INSTALL_HINT`); both run Debian's Chromium, never a
downloaded one. agent-browser's npm package ships its native binaries; the
bench runs the shipped one for this machine directly (the package's
``postinstall``, which would fetch a missing binary from GitHub, is skipped
with ``--ignore-scripts``) and gives it a private ``HOME`` under the run's
temporary directory, so no user config, session or socket is shared.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import re
import sys
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any, Protocol

import attrs
import mcp_types as types
import trio
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from .common import CHROMIUM, Service

__all__ = ["AGENT_BROWSER", "INSTALL_HINT", "PLAYWRIGHT_MCP", "Call", "CliSide", "McpSide",
           "Reading", "Side", "ToolFailed", "agent_browser_cli", "browserd_mcp",
           "package_version", "playwright_mcp"]

JS = Path(__file__).resolve().parent / "js" / "node_modules"
PLAYWRIGHT_MCP = JS / "@playwright" / "mcp" / "cli.js"
#: The package's directory; the binary for this machine is under its ``bin/``.
AGENT_BROWSER = JS / "agent-browser"
INSTALL_HINT = ("Playwright MCP or agent-browser is missing: PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 "
                "npm ci --ignore-scripts --prefix bench/js")
#: One CLI call may take this long (a wait in it included) before the bench gives up.
CLI_DEADLINE_S = 60.0


class ToolFailed(RuntimeError):
    """A tool call answered an error the task does not expect."""


@attrs.frozen
class Call:
    """One tool call: its name, the characters of its result, its time, whether it failed."""

    tool: str
    chars: int
    ms: float
    error: bool


@attrs.define
class Reading:
    """The calls one run of a task made."""

    calls: list[Call] = attrs.field(factory=list)

    @property
    def chars(self) -> int:
        return sum(call.chars for call in self.calls)

    def summary(self, *, ms: bool = False) -> str:
        return ", ".join(f"`{c.tool}`{' (error)' if c.error else ''} {c.chars:,}"
                         + (f" / {c.ms:.0f} ms" if ms else "") for c in self.calls)


class Side(Protocol):
    """What the runner needs of a side: the reading its calls go to."""

    reading: Reading


def _checked(reading: Reading, call: Call, text: str, may_fail: bool, what: str) -> str:
    reading.calls.append(call)
    if call.error and not may_fail:
        raise ToolFailed(f"{what}: {text[:800]}")
    return ("ERROR " if call.error else "") + text


@attrs.define
class McpSide:
    """One MCP session; :meth:`call` records every result into the current reading.

    Transport errors propagate (they are not the agent's reading).
    """

    client: Client
    reading: Reading = attrs.field(factory=Reading)
    defaults: dict[str, Any] = attrs.field(factory=dict)

    async def call(self, tool: str, args: dict[str, Any] | None = None, *,
                   may_fail: bool = False) -> str:
        t0 = time.perf_counter()
        result = await self.client.call_tool(tool, {**self.defaults, **(args or {})})
        text = "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))
        call = Call(tool=tool, chars=len(text), error=bool(result.is_error),
                    ms=(time.perf_counter() - t0) * 1000)
        return _checked(self.reading, call, text, may_fail, f"{tool} {args}")


@attrs.define
class CliSide:
    """agent-browser's CLI: each invocation is one call, its stdout and stderr what is read.

    A call that exits non-zero is an error. A call still running after
    :data:`CLI_DEADLINE_S` is killed (trio cancels the process) and raises
    :class:`trio.TooSlowError`.
    """

    binary: Path
    env: dict[str, str]
    reading: Reading = attrs.field(factory=Reading)

    async def call(self, *args: str, stdin: str = "", tool: str | None = None,
                   may_fail: bool = False) -> str:
        t0 = time.perf_counter()
        with trio.fail_after(CLI_DEADLINE_S):
            done = await trio.run_process([str(self.binary), *args], stdin=stdin.encode(),
                                          capture_stdout=True, capture_stderr=True,
                                          check=False, env=self.env)
        text = (done.stdout.decode("utf-8", "replace")
                + done.stderr.decode("utf-8", "replace"))
        call = Call(tool=tool or args[0], chars=len(text), error=done.returncode != 0,
                    ms=(time.perf_counter() - t0) * 1000)
        return _checked(self.reading, call, text, may_fail, " ".join(args))

    async def batch(self, *commands: Sequence[str], may_fail: bool = False) -> str:
        """``batch --bail`` with ``commands`` as JSON on stdin: one call, stops at an error."""
        return await self.call("batch", "--bail", stdin=json.dumps([list(c) for c in commands]),
                               tool="batch " + "+".join(c[0] for c in commands),
                               may_fail=may_fail)


def package_version(directory: Path) -> str:
    """The ``version`` of the npm package in ``directory`` ("?" when it is not there)."""
    try:
        return str(json.loads((directory / "package.json").read_text())["version"])
    except (OSError, ValueError, KeyError):
        return "?"


# -- starting the sides --------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def browserd_mcp(service: Service, log: Path) -> AsyncIterator[McpSide]:
    """``browserd mcp --caps core,page`` against ``service``, on a tab of its own."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "browserd", "mcp", "--caps", "core,page"],
        env={**os.environ, "BROWSERD_HOME": str(service.home),
             "BROWSERD_CONTROL_URL": service.base_url})
    with open(log, "a") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            side = McpSide(client)
            opened = await side.call("tabs_open", {"url": "about:blank"})
            tab = re.search(r"\b[0-9A-F]{32}\b", opened)
            if tab is None:
                raise ToolFailed(f"tabs_open: no target id in {opened!r}")
            side.defaults["targetId"] = tab.group(0)
            yield side


@contextlib.asynccontextmanager
async def playwright_mcp(workdir: Path, log: Path) -> AsyncIterator[McpSide]:
    """``@playwright/mcp`` on stdio: headless Debian Chromium, in-memory profile."""
    if not PLAYWRIGHT_MCP.is_file():
        raise SystemExit(INSTALL_HINT)
    args = [str(PLAYWRIGHT_MCP), "--headless", "--isolated", "--executable-path", CHROMIUM,
            "--viewport-size", "1280x720", "--output-dir", str(workdir / "out")]
    if os.geteuid() == 0:
        args.append("--no-sandbox")
    params = StdioServerParameters(command="node", args=args, cwd=str(workdir),
                                   env={**os.environ, "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"})
    with open(log, "a") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            yield McpSide(client)


def _agent_browser_binary() -> Path:
    """The native binary the npm package ships for this machine, made executable."""
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(
        platform.machine().lower(), platform.machine())
    binary = AGENT_BROWSER / "bin" / f"agent-browser-linux-{arch}"
    if not binary.is_file():
        raise SystemExit(INSTALL_HINT)
    if not os.access(binary, os.X_OK):  # npm does not keep the mode of the packed file
        binary.chmod(binary.stat().st_mode | 0o111)
    return binary


@contextlib.asynccontextmanager
async def agent_browser_cli(workdir: Path) -> AsyncIterator[CliSide]:
    """agent-browser's CLI in a session of its own: headless Debian Chromium, 1280x720.

    Its first call starts the session's daemon, which launches Chromium (a
    second or more: not part of any task). On exit the session is closed
    (shielded, 20 s at most); should that fail, the daemon shuts itself down
    after 10 idle minutes.
    """
    home = workdir / "agent-browser"
    (home / "run").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_BROWSER_")}
    env.update(HOME=str(home), AGENT_BROWSER_SOCKET_DIR=str(home / "run"),
               AGENT_BROWSER_SESSION="bench", AGENT_BROWSER_EXECUTABLE_PATH=CHROMIUM,
               AGENT_BROWSER_NO_VERSION_CHECK="1",  # no request to Google for Chrome releases
               AGENT_BROWSER_IDLE_TIMEOUT_MS="600000")
    if os.geteuid() == 0:
        env["AGENT_BROWSER_ARGS"] = "--no-sandbox"
    side = CliSide(binary=_agent_browser_binary(), env=env)
    try:
        await side.call("open", "about:blank")
        await side.call("set", "viewport", "1280", "720")
        yield side
    finally:
        side.reading = Reading()  # not the last task's
        with trio.move_on_after(20) as scope:
            scope.shield = True
            await side.call("close", may_fail=True)
