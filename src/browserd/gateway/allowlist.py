"""The CDP methods a gateway client may send: an allowlist, by domain.

Everything not listed here is refused with CDP error -32000 ``"<Method> is
not allowed through browserd's CDP gateway …"`` before it reaches the
browser. The table is the union of what browser-use, Stagehand, Playwright
MCP, Playwright, puppeteer-core and chrome-devtools-mcp send (measured), so
those keep working; it leaves out whatever ends or reconfigures the browser
(``Browser.close``/``crash``, ``SystemInfo``, ``Target.exposeDevToolsProtocol``),
hands out non-flat sessions (``Target.sendMessageToTarget``), reads or writes
host files by path outside browserd's checks, or reaches targets by other
means than the scoped ``Target`` methods.

Listed is not the same as unconditional: :mod:`.rules` judges the parameters
of the methods :data:`JUDGED` names (URLs, download paths, file paths, flat
sessions, browser contexts, target ids, stream handles).

Plain data and one plain function; no I/O.
"""

from __future__ import annotations

__all__ = ["ALLOWED", "JUDGED", "LIFETIME_METHODS", "allowed", "not_allowed"]

#: Domain → the methods a client may call in it.
ALLOWED: dict[str, frozenset[str]] = {domain: frozenset(methods.split()) for domain, methods in {
    "Accessibility": "enable getFullAXTree queryAXTree",
    "Audits": "enable",
    "Autofill": "enable setAddresses",
    "Browser": "getVersion getWindowBounds getWindowForTarget grantPermissions "
               "resetPermissions setContentsSize setDownloadBehavior setWindowBounds",
    "CSS": "disable enable",
    # (getFrameOwner: where a frame sits in its page — read-only, page-local; browserd's
    # own tab code uses it to place out-of-process frames)
    "DOM": "describeNode enable focus getBoxModel getContentQuads getDocument getFrameOwner "
           "getSearchResults performSearch requestNode resolveNode scrollIntoViewIfNeeded "
           "setFileInputFiles",
    "DOMSnapshot": "captureSnapshot",
    "Debugger": "disable enable getScriptSource setAsyncCallStackDepth "
                "setBlackboxExecutionContexts setBlackboxPatterns setPauseOnExceptions "
                "setSkipAllPauses",
    "Emulation": "setCPUThrottlingRate setDeviceMetricsOverride setEmulatedMedia "
                 "setFocusEmulationEnabled setGeolocationOverride setTimezoneOverride "
                 "setTouchEmulationEnabled",
    "Fetch": "disable enable fulfillRequest continueRequest continueWithAuth failRequest",
    "IO": "close read",
    "Input": "dispatchDragEvent dispatchKeyEvent dispatchMouseEvent insertText "
             "synthesizeScrollGesture",
    "Inspector": "enable",
    "Log": "enable startViolationsReport",
    "Network": "deleteCookies emulateNetworkConditions emulateNetworkConditionsByRule enable "
               "getCookies getResponseBody overrideNetworkState setAttachDebugStack "
               "setCacheDisabled setExtraHTTPHeaders setUserAgentOverride",
    # (crash: only the client's own tab's renderer — renderers are never shared across
    # browser contexts; the fault drills inject F7 with it)
    "Page": "addScriptToEvaluateOnNewDocument bringToFront captureScreenshot crash "
            "createIsolatedWorld enable getFrameTree getLayoutMetrics getNavigationHistory "
            "getResourceTree handleJavaScriptDialog navigate navigateToHistoryEntry printToPDF "
            "reload screencastFrameAck setDownloadBehavior setFontFamilies "
            "setInterceptFileChooserDialog setLifecycleEventsEnabled startScreencast "
            "stopScreencast",
    "Performance": "enable getMetrics",
    "Profiler": "disable enable startPreciseCoverage stopPreciseCoverage takePreciseCoverage",
    "Runtime": "addBinding callFunctionOn enable evaluate getIsolateId getProperties "
               "releaseObject runIfWaitingForDebugger",
    "Storage": "clearCookies getCookies getStorageKey setCookies",
    "Target": "activateTarget attachToBrowserTarget attachToTarget closeTarget "
              "createBrowserContext createTarget detachFromTarget disposeBrowserContext "
              "getBrowserContexts getDevToolsTarget getTargetInfo getTargets setAutoAttach "
              "setDiscoverTargets",
    "Tracing": "end start",
    "WebMCP": "enable",
}.items()}

#: Domain → its allowed methods whose parameters (or results) :mod:`.rules` and
#: :mod:`.targets` judge: download paths, contexts in reach, targets in scope, file
#: paths under upload_roots, the URL policy, flat sessions, streams of the client's own,
#: and the browser-wide ones a session-bound client may not send on a browser session.
JUDGED: dict[str, frozenset[str]] = {domain: frozenset(methods.split()) for domain, methods in {
    "Browser": "setDownloadBehavior grantPermissions resetPermissions getWindowForTarget",
    "DOM": "setFileInputFiles",
    "Fetch": "continueRequest enable",
    "IO": "read close",
    "Input": "dispatchDragEvent",
    "Page": "navigate setDownloadBehavior",
    "Storage": "clearCookies getCookies setCookies",
    "Target": "activateTarget attachToTarget closeTarget createBrowserContext createTarget "
              "detachFromTarget disposeBrowserContext getBrowserContexts getDevToolsTarget "
              "getTargetInfo getTargets setAutoAttach",
    "Tracing": "start",
}.items()}

#: Unlisted commands that would end the browser: refused with a pointer to browserd's API.
LIFETIME_METHODS = frozenset({"Browser.close", "Browser.crash", "Browser.crashGpuProcess"})


def allowed(method: str) -> bool:
    """Whether ``method`` (``Domain.method``) is on the allowlist."""
    domain, dot, name = method.partition(".")
    return bool(dot) and name in ALLOWED.get(domain, frozenset())


def not_allowed(method: str) -> str | None:
    """The refusal text for a method off the allowlist (None: it is on it)."""
    if allowed(method):
        return None
    if method in LIFETIME_METHODS:
        return (f"{method} is not allowed through browserd's CDP gateway "
                "(browserd owns the browser's lifetime; use its API)")
    return (f"{method} is not allowed through browserd's CDP gateway "
            "(it is not on the gateway's allowlist; docs/api.md lists what is)")
