"""The ``browserd cookies|storage|state|emulate`` commands against the shared service."""

from __future__ import annotations

import secrets
import stat
from pathlib import Path

import httpx
import orjson
import pytest
import trio

from tests.conftest import PageServer, ServiceInfo
from tests.integration.helpers import navigate
from tests.integration.test_cli import fails, ok

pytestmark = pytest.mark.chromium


async def test_cookie_storage_state_and_emulate_commands(
    service: ServiceInfo, api: httpx.AsyncClient, tab: str, pages: PageServer, tmp_path: Path,
) -> None:
    name, value = f"cli{secrets.token_hex(4)}", secrets.token_hex(8)
    with trio.fail_after(90):
        await ok(service, "cookies", "set", name, value, "--domain", "cli.test", "--http-only")
        listed = (await ok(service, "cookies", "--domain", "cli.test", "--json")).json()
        assert [(c["name"], c["value"], c["httpOnly"]) for c in listed["cookies"]] == \
            [(name, value, True)]
        run = await fails(service, "cookies", "delete")
        assert "all: true" in run.err

        await navigate(api, tab, pages.url("/state_app.html"))
        await ok(service, "storage", "set", "theme=cli-dark", "--target", tab)
        got = (await ok(service, "storage", "get", "--target", tab, "--json")).json()
        assert got["items"]["theme"] == "cli-dark" and got["origin"] == pages.base_url

        saved = tmp_path / "state.json"
        run = await ok(service, "state", "save", str(saved))
        assert run.out.startswith("saved ")
        assert stat.S_IMODE(saved.stat().st_mode) == 0o600
        state = orjson.loads(saved.read_bytes())
        assert any(c["name"] == name for c in state["cookies"])

        await ok(service, "cookies", "delete", "--name", name)
        await ok(service, "storage", "delete", "theme", "--target", tab)
        run = await ok(service, "state", "load", str(saved))
        assert run.out.startswith("loaded ")
        listed = (await ok(service, "cookies", "--name", name, "--json")).json()
        assert [c["value"] for c in listed["cookies"]] == [value]
        got = (await ok(service, "storage", "get", "--target", tab, "--json")).json()
        assert got["items"]["theme"] == "cli-dark"

        shown = (await ok(service, "emulate", "--timezone", "Pacific/Auckland",
                          "--viewport", "390x844", "--mobile", "--target", tab,
                          "--json")).json()
        assert shown["emulation"]["timezone"] == "Pacific/Auckland"
        assert shown["emulation"]["viewport"]["mobile"] is True
        shown = (await ok(service, "emulate", "--target", tab, "--json")).json()
        assert shown["emulation"]["timezone"] == "Pacific/Auckland"
        shown = (await ok(service, "emulate", "--reset", "--target", tab, "--json")).json()
        assert shown["emulation"]["timezone"] is None
        await ok(service, "cookies", "delete", "--name", name)
