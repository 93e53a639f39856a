"""Routes for page work: navigate and eval here; inspection, input and media in their modules."""

from __future__ import annotations

from typing import Any

import trio

from ..errors import EvalDisabled
from ..system import System
from ..tabs import page
from .schema import Field, Route

TARGET = Field(name="targetId", type="string", max_length=200,
               description="a tab's targetId or a unique prefix (≥ 4 chars); "
               "default: the current tab")


def timeout_field(default_ms: int, maximum_ms: int = 300_000) -> Field:
    return Field(name="timeoutMs", type="integer", default=default_ms, minimum=1,
                 maximum=maximum_ms, description="deadline in milliseconds")


async def navigate(system: System, args: dict[str, Any]) -> dict[str, Any]:
    url = system.url_policy.check(args["url"])
    rt = system.supervisor.require_runtime()
    timeout_s = args["timeoutMs"] / 1000
    with trio.fail_after(timeout_s + 5):
        tab = await rt.tabs.resolve(args["targetId"])
        async with tab.work(allow_crashed=True):
            return await page.navigate(tab, url, wait_until=args["waitUntil"],
                                       timeout_s=timeout_s)


async def evaluate(system: System, args: dict[str, Any]) -> dict[str, Any]:
    if not system.settings.evaluate_enabled:
        raise EvalDisabled("JavaScript evaluation is disabled in settings")
    rt = system.supervisor.require_runtime()
    timeout_s = args["timeoutMs"] / 1000
    with trio.fail_after(timeout_s + 5):
        tab = await rt.tabs.resolve(args["targetId"])
        async with tab.work(allow_dialog=False):
            return await page.run_eval(tab, args["js"], await_promise=args["await"],
                                       timeout_s=timeout_s)


def page_routes() -> list[Route]:
    from .download_routes import download_routes  # navdl
    from .input_routes import input_routes
    from .inspect_routes import inspect_routes
    from .media_routes import media_routes

    return [
        Route(path="/navigate", methods=("POST",), handler=navigate, tag="page",
              summary="Navigate a tab and wait for it to load",
              fields=(TARGET,
                      Field(name="url", type="string", required=True, max_length=8192),
                      Field(name="waitUntil", type="string", default="load",
                            enum=("load", "domcontentloaded", "none")),
                      timeout_field(30_000))),
        Route(path="/eval", methods=("POST",), handler=evaluate, tag="page",
              summary="Evaluate JavaScript in the page; the result by value",
              fields=(TARGET,
                      Field(name="js", type="string", required=True, max_length=1_000_000),
                      Field(name="await", type="boolean", default=False),
                      timeout_field(10_000))),
        *inspect_routes(),
        *input_routes(),
        *media_routes(),
        *download_routes(),  # navdl
    ]
