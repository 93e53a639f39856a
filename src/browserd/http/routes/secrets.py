"""Vault routes: the person keeps secrets, agents use them by name (``/login``, ``/type``).

- ``GET /secrets`` (the person): names, origins, whether a username is kept,
  creation times — never values.
- ``PUT /secrets/<name> {value, origin?, username?}`` (the person): store or
  replace one. ``DELETE /secrets/<name>`` (the person).
- ``POST /login {name, targetId?, submit?: true}`` (an agent with ``act`` and
  ``secrets``): on a page of the secret's origin, type its username (when it
  keeps one) into the form's user field and its value into the password
  field, then submit. Answers which fields were filled, never what.

Typing a secret anywhere else is ``/type {secret: NAME}`` (and ``/act``
steps). See :mod:`browserd.vault` for storage and redaction.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import trio

from ...errors import BadRequest, NotFound, SecretNotFound, TabNotFound
from ...principals import require
from ...system import System
from ...tabs import actions as inp
from ...tabs.actor import TabActor
from ...tabs.locator import ElementTarget
from ..answers import returns
from ..facts import (
    ACTS,
    DIALOG,
    HANDOFF,
    LOCAL_ACTS,
    LOCAL_READS,
    LOCAL_SETS,
    NO_TOOL,
    NOTHING,
    Cli,
    HeldAs,
    Render,
    by_hand,
)
from ..fields import TARGET
from ..schema import Field, Route
from ..tabwork import on_tab

__all__ = ["PASSWORD_SELECTOR", "USERNAME_SELECTOR", "secret_routes"]

#: The login form's fields, in the order they are tried (the first match wins).
PASSWORD_SELECTOR = "input[type=password]"
USERNAME_SELECTOR = ("form:has(input[type=password]) input[autocomplete=username], "
                     "form:has(input[type=password]) input[type=email], "
                     "form:has(input[type=password]) input[type=text], "
                     "form:has(input[type=password]) input:not([type])")
LOGIN_TIMEOUT_S = 30.0
_NAME = Field(name="name", type="string", required=True, max_length=64,
              description="the secret's name")


async def list_secrets(system: System, args: dict[str, Any]) -> dict[str, Any]:
    return {"secrets": [r.to_json() for r in system.vault.records()]}


async def put_secret(system: System, args: dict[str, Any]) -> dict[str, Any]:
    record = system.vault.put(args["name"], args["value"], origin=args["origin"],
                              username=args["username"])
    return record.to_json()


async def delete_secret(system: System, args: dict[str, Any]) -> dict[str, Any]:
    if not system.vault.delete(args["name"]):
        raise SecretNotFound(f"no secret {args['name']!r}")
    return {"ok": True, "name": args["name"]}


async def login(system: System, args: dict[str, Any]) -> dict[str, Any]:
    require(system.principal, "secrets", what="POST /login")
    name = args["name"]
    value, origin = system.vault.for_typing(name)
    username = system.vault.username_of(name)
    steps: list[tuple[str, inp.TypeText]] = []
    if username:
        steps.append(("username", inp.TypeText(
            text=username, target=ElementTarget(selector=USERNAME_SELECTOR), clear=True,
            origin=origin, secret=name)))
    steps.append(("password", inp.TypeText(
        text=value, target=ElementTarget(selector=PASSWORD_SELECTOR), clear=True,
        submit=args["submit"], origin=origin, secret=name)))

    async def run(tab: TabActor) -> dict[str, Any]:
        filled = []
        for field, step in steps:
            try:
                await inp.perform(tab, step, timeout_s=LOGIN_TIMEOUT_S,
                                  evaluate_enabled=system.settings.evaluate_enabled)
            except TabNotFound:
                raise
            except (BadRequest, NotFound) as exc:
                raise BadRequest(f"no {field} field to fill on this page ({exc.message})",
                                 hint="open the login form first; /snapshot shows it") from None
            filled.append(field)
        return {"ok": True, "targetId": tab.target_id, "name": name, "filled": filled,
                "submitted": args["submit"]}

    with trio.fail_after(LOGIN_TIMEOUT_S * len(steps) + 5):
        return await on_tab(system, args["targetId"], run, deadline_s=LOGIN_TIMEOUT_S * 2)


def _secrets_needed(args: Mapping[str, Any]) -> tuple[str, ...]:
    """A login types a vault secret: it needs ``secrets`` whatever its arguments."""
    return ("secrets",)


def secret_routes() -> list[Route]:
    path_name = Field(name="name", type="string", required=True, max_length=64)
    return [
        Route(path="/secrets", methods=("GET",), handler=list_secrets, tag="owner",
              scope="none", summary="The vault's secrets: names and origins, never values "
                                    "(owner token)",
              name="secrets", group=NO_TOOL, hints=LOCAL_READS, needs="owner",
              answer=returns("SecretList"), blocked_by=NOTHING, cli=by_hand("secrets")),
        Route(path="/secrets/<name>", methods=("PUT",), handler=put_secret, tag="owner",
              scope="none", path_params=("name",),
              fields=(path_name,
                      Field(name="value", type="string", required=True, max_length=4096,
                            description="the secret (never answered or logged)"),
                      Field(name="origin", type="string", max_length=300,
                            description="scheme://host[:port]: typed only on that origin"),
                      Field(name="username", type="string", max_length=300,
                            description="the login name /login types with it")),
              summary="Store or replace a secret (owner token)",
              name="secrets_put", group=NO_TOOL, hints=LOCAL_SETS, needs="owner",
              answer=returns("Secret"), blocked_by=NOTHING, cli=by_hand("secrets")),
        Route(path="/secrets/<name>", methods=("DELETE",), handler=delete_secret, tag="owner",
              scope="none", path_params=("name",), fields=(path_name,),
              summary="Delete a secret (owner token)",
              name="secrets_delete", group=NO_TOOL, hints=LOCAL_ACTS, needs="owner",
              answer=returns("Deleted"), blocked_by=NOTHING, cli=by_hand("secrets")),
        Route(path="/login", methods=("POST",), handler=login, tag="input",
              fields=(TARGET, _NAME,
                      Field(name="submit", type="boolean", default=True,
                            description="submit the form after filling it")),
              summary="Log in with a vault secret: fill the page's username and password "
                      "fields (on the secret's origin only) and submit",
              name="login", group="page", hints=ACTS, needs="act",
              confirm=HeldAs(kind="submit"), untrusted=(), render=Render.FIELDS,
              extra_needs=_secrets_needed, answer=returns("LoginAnswer"),
              blocked_by=DIALOG | HANDOFF, cli=Cli()),
    ]
