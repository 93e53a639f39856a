"""The facts a route declares beside its fields: typed records, and the checks that all are there.

Every :class:`~browserd.http.schema.Route` says, where it is declared (its
``http/routes/*.py`` module), everything the lanes and the documents derive
from it: its ``name`` (the ``/ws`` method and the MCP tool), its MCP
``group`` (:data:`GROUPS`, or :data:`NO_TOOL`), its :class:`Hints` (the MCP
annotations), the token scope it ``needs``, its ``answer``, what it is
``blocked_by`` (:data:`DIALOG`, :data:`HANDOFF`: enforced by
:func:`browserd.http.tabwork.on_tab` for every lane), its :class:`Cli`
command and, where they apply, how a ``confirm`` rule can hold a call of it
(:data:`Confirm`: :class:`HeldAs`, :class:`HeldByAction`, :class:`HeldSteps`,
:class:`HeldDownload` or :data:`NOT_HELD`; read by
:mod:`browserd.http.confirmations`), which fields of its answer are the
page's words (``untrusted``: marked in every JSON answer) and how an agent
reads its answer (:class:`Render`: :mod:`browserd.mcp.render`).
:mod:`browserd.http.declared` refuses a table where a route left any out, so
a route cannot be added without deciding each of them.

Plain records and code: no I/O.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

import attrs

__all__ = ["ACTS", "ADDS", "BLOCKERS", "DIALOG", "GROUPS", "HANDOFF", "LOCAL_ACTS",
           "LOCAL_ADDS", "LOCAL_READS", "LOCAL_SETS", "NOTHING", "NOT_HELD", "NO_SCOPE",
           "NO_TOOL", "READS", "SETS", "Cli", "Confirm", "HeldAs", "HeldByAction",
           "HeldDownload", "HeldSteps", "Hints", "NotHeld", "Prefix", "Render", "Words",
           "by_hand", "cli_command", "confirm_json", "held", "marked_untrusted"]

#: The MCP tool groups (``--caps``), in the order the documents list them. ``core`` is
#: what an agent needs to browse and finish a form (at most 20 tools).
GROUPS = ("core", "page", "files", "state", "network", "emulation", "profiles", "service")
#: The group of a route that is no ``/ws`` method and no MCP tool: the person's routes,
#: routes without the token, raw answers, routes with path parameters (their twins take
#: the field) and ``GET /`` (``status``).
NO_TOOL = "none"
#: The scope of a route that needs no token (``/healthz``).
NO_SCOPE = "none"

#: What can block a route's work on a tab: an open JavaScript dialog (409 DIALOG_OPEN)
#: or the tab's handoff to a person (409 HANDOFF_ACTIVE).
BLOCKERS = ("dialog", "handoff")
DIALOG: frozenset[str] = frozenset({"dialog"})
HANDOFF: frozenset[str] = frozenset({"handoff"})
NOTHING: frozenset[str] = frozenset()


@attrs.frozen(kw_only=True)
class Hints:
    """What a call may do (the MCP tool annotations; the documents' hints column)."""

    read_only: bool
    #: It may change or remove what exists (a click can do anything a page's button does).
    destructive: bool
    #: Repeated with the same arguments it leaves things as the first call did.
    idempotent: bool
    #: It reaches web pages (False: it acts on browserd itself).
    open_world: bool

    def to_json(self) -> dict[str, bool]:
        return {"readOnly": self.read_only, "destructive": self.destructive,
                "idempotent": self.idempotent, "openWorld": self.open_world}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Hints:
        return cls(read_only=bool(data.get("readOnly")),
                   destructive=bool(data.get("destructive")),
                   idempotent=bool(data.get("idempotent")),
                   open_world=bool(data.get("openWorld")))

    def words(self) -> str:
        """``read-only``, ``destructive``, ``idempotent``, ``open-world`` where they hold."""
        return ", ".join(word for word, held in (
            ("read-only", self.read_only), ("destructive", self.destructive),
            ("idempotent", self.idempotent), ("open-world", self.open_world)) if held) or "-"


#: Reads only. On web pages, or (``LOCAL_``) on browserd itself.
READS = Hints(read_only=True, destructive=False, idempotent=True, open_world=True)
#: Only adds (a tab, a profile, a token): nothing existing is changed or removed.
ADDS = Hints(read_only=False, destructive=False, idempotent=False, open_world=True)
#: May change anything, and again when repeated (a click, a key, a script).
ACTS = Hints(read_only=False, destructive=True, idempotent=False, open_world=True)
#: Changes to a given state: repeated, it leaves things as the first call did.
SETS = Hints(read_only=False, destructive=True, idempotent=True, open_world=True)
LOCAL_READS = attrs.evolve(READS, open_world=False)
LOCAL_ADDS = attrs.evolve(ADDS, open_world=False)
LOCAL_ACTS = attrs.evolve(ACTS, open_world=False)
LOCAL_SETS = attrs.evolve(SETS, open_world=False)


@attrs.frozen(kw_only=True)
class Words:
    """Positional words a CLI function places into fields (``find ROLE NAME``):
    ``placer`` names the function (:data:`browserd.cli.args.PLACERS`)."""

    metavar: str
    help: str
    placer: str


@attrs.frozen(kw_only=True)
class Prefix:
    """A path parameter the CLI takes as a unique prefix (≥ 4 characters), resolved by
    listing ``listing`` (a GET path) and reading the ids of its ``key`` list."""

    listing: str
    key: str


@attrs.frozen(kw_only=True)
class Cli:
    """The route's ``browserd`` command.

    ``command``: its name (None: the route's name with ``-`` for ``_``);
    ``positional``: fields taken as arguments (``?`` optional, ``*`` zero or
    more); ``words``, ``prefixed``, ``negations`` (``--headed`` sets
    ``headless`` false); or ``covered_by``: the command that already covers
    the route (a hand-written one, or another route's), and no command of its own.
    """

    command: str | None = None
    positional: tuple[str, ...] = ()
    words: Words | None = None
    prefixed: Prefix | None = None
    negations: Mapping[str, str] = attrs.field(factory=dict, hash=False)
    covered_by: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.command is not None:
            out["command"] = self.command
        if self.positional:
            out["positional"] = list(self.positional)
        if self.words is not None:
            out["words"] = attrs.asdict(self.words)
        if self.prefixed is not None:
            out["prefixed"] = attrs.asdict(self.prefixed)
        if self.negations:
            out["negations"] = dict(self.negations)
        if self.covered_by is not None:
            out["coveredBy"] = self.covered_by
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Cli:
        words, prefixed = data.get("words"), data.get("prefixed")
        return cls(command=data.get("command"),
                   positional=tuple(str(p) for p in data.get("positional") or ()),
                   words=None if not isinstance(words, dict) else Words(
                       metavar=str(words.get("metavar", "")), help=str(words.get("help", "")),
                       placer=str(words.get("placer", ""))),
                   prefixed=None if not isinstance(prefixed, dict) else Prefix(
                       listing=str(prefixed.get("listing", "")),
                       key=str(prefixed.get("key", ""))),
                   negations={str(k): str(v) for k, v in (data.get("negations") or {}).items()},
                   covered_by=data.get("coveredBy"))


def by_hand(command: str) -> Cli:
    """The CLI fact of a route another command covers (``by_hand("cookies")``)."""
    return Cli(covered_by=command)


def cli_command(name: str, cli: Cli) -> str:
    """The command a route with this name and CLI fact is called by (or covered by)."""
    return cli.covered_by or cli.command or name.replace("_", "-")


# -- what a confirm rule can hold ---------------------------------------------------


@attrs.frozen(kw_only=True)
class HeldAs:
    """A call is judged by the ``confirm`` rules as one action of ``kind`` (one of
    :data:`browserd.confirm.KINDS`): ``/click`` a click, ``/back`` a navigation,
    ``/login`` a submit. Its element's name is the one its fields name."""

    kind: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind}


@attrs.frozen(kw_only=True)
class HeldByAction:
    """Raw input, judged by what its ``action`` field does: ``kinds`` maps an action to
    the rule kind it is (``/mouse``: ``down`` and ``click`` are a click); any other
    action is never held. The element it reaches cannot be told before it runs, so
    any name rule of its kind holds it."""

    kinds: Mapping[str, str] = attrs.field(hash=False)

    def to_json(self) -> dict[str, Any]:
        return {"byAction": dict(self.kinds)}


@attrs.frozen(kw_only=True)
class HeldSteps:
    """Each of the call's ``actions`` is judged as an action of its own ``kind``
    (``/act``); the raw input kinds of ``raw`` by what their ``action`` does. No rule holds
    a step of a kind in ``unheld``: one that only reads the page (a find), or whose own
    route no rule holds (a hover, a wait), so a batch holds nothing the routes let by."""

    raw: Mapping[str, HeldByAction] = attrs.field(hash=False)
    unheld: frozenset[str] = frozenset()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"steps": True, "byAction": {kind: dict(by.kinds)
                                                           for kind, by in self.raw.items()}}
        if self.unheld:
            out["unheld"] = sorted(self.unheld)
        return out


@attrs.frozen(kw_only=True)
class HeldDownload:
    """The download the call's ``field`` names is handed out only once the person
    approved (a ``download`` rule; its name is the file's)."""

    field: str = "id"

    def to_json(self) -> dict[str, Any]:
        return {"download": self.field}


@attrs.frozen
class NotHeld:
    """No ``confirm`` rule holds a call of the route (it only reads, moves or waits)."""


NOT_HELD = NotHeld()
Confirm = HeldAs | HeldByAction | HeldSteps | HeldDownload | NotHeld
"""How a ``confirm`` rule can hold a call of a route (:mod:`browserd.http.confirmations`)."""


def held(confirm: Confirm | None) -> bool:
    """Whether a ``confirm`` rule can hold a call (202 CONFIRMATION_REQUIRED)."""
    return confirm is not None and not isinstance(confirm, NotHeld)


def confirm_json(confirm: Confirm | None) -> dict[str, Any] | None:
    """``x-browserd-confirm``: how a rule holds a call; None when none can."""
    if confirm is None or isinstance(confirm, NotHeld):
        return None
    return confirm.to_json()


# -- what of an answer is the page's -------------------------------------------------


def marked_untrusted(fields: tuple[str, ...] | None, result: Any) -> Any:
    """``result`` with ``untrusted`` naming those of ``fields`` (the page-content fields a
    route declares) it holds; as it is when it holds none."""
    if not fields or not isinstance(result, dict):
        return result
    present = [f for f in fields if f in result]
    return {**result, "untrusted": present} if present else result


# -- how an agent reads an answer ---------------------------------------------------


class Render(enum.StrEnum):
    """How an answer is turned into the text an agent reads (:mod:`browserd.mcp.render`);
    what the page provided always inside the answer's page boundary."""

    #: The page's text under its title, URL and load state (or what changed).
    SNAPSHOT = "snapshot"
    #: Find matches, one per line.
    MATCHES = "matches"
    #: A script's value (a string as itself, anything else as JSON).
    VALUE = "value"
    #: One line per tab.
    TABS = "tabs"
    #: "opened" and the new tab's line.
    OPENED = "opened"
    #: A batch: a line per step, then the snapshot asked for.
    STEPS = "steps"
    #: A capture's file line, and the image itself when small enough.
    IMAGE = "image"
    #: A capture's file line (no image).
    FILE = "file"
    #: "ok", how it was done, what it caused (effects), then the snapshot asked for.
    ACTION = "action"
    #: The DOM's text.
    TEXT = "text"
    #: ``key: value`` lines, all of them the page's (console lines, network data,
    #: cookies, stored state).
    PAGE = "page"
    #: ``key: value`` lines: browserd's own words.
    FIELDS = "fields"
