"""What the mutation runner (:mod:`supervision.mutants`) breaks, and which tests must notice.

- :data:`TARGETS`: one :class:`Target` per module under mutation (a path under
  ``src/``, optionally only some of its functions) and the fast tests that
  guard it; ``--only`` picks them by name.
- :data:`NAMED`: the hand-written mutations of ``--named`` (:class:`Named`: a
  text found exactly once in a module, replaced), the regressions the suite
  once missed.

Plain data: when modules move, edit the paths (and ``NAMED``'s texts) here.
"""

from __future__ import annotations

import attrs


@attrs.frozen(kw_only=True)
class Target:
    """One module under mutation and the tests that must catch its mutants."""

    name: str
    module: str  # path under src/
    tests: tuple[str, ...]
    #: Only mutate inside these functions/methods (``Class.method`` or a bare
    #: name); None mutates the whole module.
    functions: tuple[str, ...] | None = None
    #: A pytest ``-k`` expression narrowing the tests, or None for all of them.
    select: str | None = None
    timeout_s: float = 60.0


TARGETS: tuple[Target, ...] = (
    Target(name="guard", module="browserd/http/guard.py",
           tests=("tests/unit/test_guard.py", "tests/unit/test_guard_bodies.py",
                  "tests/unit/test_guard_hypercorn.py")),
    Target(name="urlpolicy", module="browserd/urlpolicy.py",
           tests=("tests/unit/test_urlpolicy.py",)),
    Target(name="token", module="browserd/token.py", tests=("tests/unit/test_token.py",)),
    Target(name="proof", module="browserd/client.py", tests=("tests/unit/test_client_proof.py",),
           functions=("healthz_proof", "Client.verify")),
    Target(name="media", module="browserd/media/store.py",
           tests=("tests/unit/test_media_store.py", "tests/unit/test_media_store_retention.py")),
    Target(name="restart-loop", module="browserd/supervisor/supervisor.py",
           tests=("tests/unit/test_supervisor.py", "tests/unit/test_supervisor_states.py",
                  "tests/unit/test_stop_ladder.py", "tests/unit/test_browser_launch.py"),
           functions=("BrowserSupervisor.run", "BrowserSupervisor.start",
                      "BrowserSupervisor.stop", "BrowserSupervisor.require_runtime",
                      "BrowserSupervisor._attempt", "BrowserSupervisor._run_launched",
                      "BrowserSupervisor._want", "BrowserSupervisor._set_state",
                      "BrowserSupervisor.mark_running")),
    Target(name="restart-policy", module="browserd/supervisor/policy.py",
           tests=("tests/unit/test_supervision_data.py", "tests/unit/test_supervisor.py",
                  "tests/unit/test_supervisor_states.py")),
    Target(name="leftovers", module="browserd/supervisor/leftovers.py",
           tests=("tests/unit/test_leftovers.py", "tests/unit/test_stop_ladder.py")),
    Target(name="stop-ladder", module="browserd/browser/process.py",
           tests=("tests/unit/test_stop_ladder.py", "tests/unit/test_browser_launch.py"),
           functions=("BrowserProcess.stop", "BrowserProcess._signal_group",
                      "BrowserProcess._send_close", "BrowserProcess._wait_ready",
                      "run_browser")),
    Target(name="refmap", module="browserd/tabs/state.py",
           tests=("tests/unit/test_tab_state.py",), functions=("RefMap",)),
    # Ref resolution is exercised against a real Chromium (a browserd per mutant): slow.
    Target(name="refs", module="browserd/tabs/resolve.py",
           tests=("tests/integration/test_snapshot.py", "tests/integration/test_input.py"),
           functions=("resolve_ref", "_stale"),
           select="stale or refs_stable or by_ref", timeout_s=300.0),
    # -- the newer promises (issue "The suite proves the newer promises") -------------------
    Target(name="gateway-rules", module="browserd/gateway/rules.py",
           tests=("tests/unit/test_gateway_rules.py", "tests/unit/test_gateway_mutants.py")),
    Target(name="gateway-allowlist", module="browserd/gateway/allowlist.py",
           tests=("tests/unit/test_gateway_rules.py", "tests/unit/test_gateway_mutants.py")),
    Target(name="gateway-targets", module="browserd/gateway/targets.py",
           tests=("tests/unit/test_gateway_rules.py", "tests/unit/test_gateway_mutants.py",
                  "tests/unit/test_gateway_scope.py")),
    Target(name="relay-pairing", module="browserd/relay/pairing.py",
           tests=("tests/unit/test_relay_pairing.py", "tests/unit/test_relay.py",
                  "tests/unit/test_relay_mutants.py")),
    Target(name="relay-throttle", module="browserd/relay/throttle.py",
           tests=("tests/unit/test_relay_pairing.py", "tests/unit/test_relay_mutants.py")),
    Target(name="relay-door", module="browserd/relay/door.py",
           tests=("tests/unit/test_relay_pairing.py", "tests/unit/test_relay.py",
                  "tests/unit/test_relay_mutants.py"),
           functions=("RelayDoor.__init__", "RelayDoor.__call__", "RelayDoor._check_host",
                      "RelayDoor._extension_origin", "RelayDoor._pair", "RelayDoor._exchange",
                      "RelayDoor._relay", "RelayDoor._refuse_handshake",
                      "_RelayConnection._hello", "_RelayConnection._refuse", "_connection_of",
                      "_refusal_headers", "_decode")),
    Target(name="navguard-verdicts", module="browserd/tabs/navguard.py",
           tests=("tests/unit/test_navdl.py", "tests/unit/test_navguard_mutants.py",
                  "tests/unit/test_egress.py"),
           functions=("navigation_verdict", "BlockRecord.to_json", "NavGuard.mark",
                      "NavGuard.blocks_since", "NavGuard._judge", "NavGuard._record",
                      "_event_for")),
    Target(name="downloads", module="browserd/downloads/follower.py",
           tests=("tests/unit/test_navdl.py", "tests/unit/test_profile_downloads.py",
                  "tests/unit/test_downloads_mutants.py"),
           functions=("DownloadFollower._behavior", "DownloadFollower._on_event",
                      "DownloadFollower._safe_free_space", "DownloadFollower._cancel",
                      "DownloadFollower._completed", "DownloadFollower._canceled_by_browser",
                      "_int")),
    Target(name="profile-spec", module="browserd/profilespec.py",
           tests=("tests/unit/test_profiles.py", "tests/unit/test_profile_downloads.py",
                  "tests/unit/test_profiles_mutants.py")),
    # A mutant that turns the reaper into a busy loop never yields to MockClock: 20 s.
    Target(name="sessions", module="browserd/profiles/sessions.py",
           tests=("tests/unit/test_sessions.py", "tests/unit/test_sessions_mutants.py",
                  "tests/unit/test_restore.py", "tests/unit/test_restore_bookkeeping.py"),
           functions=("SessionTable",), timeout_s=20.0),
    Target(name="ui-gate", module="browserd/ui/gate.py",
           tests=("tests/unit/test_ops.py", "tests/unit/test_ops_mutants.py")),
    Target(name="ui-sessions", module="browserd/ui/sessions.py",
           tests=("tests/unit/test_ops.py", "tests/unit/test_ops_mutants.py")),
    Target(name="handoff", module="browserd/handoff.py",
           tests=("tests/unit/test_ops.py", "tests/unit/test_ops_mutants.py")),
    Target(name="redact", module="browserd/redact.py", tests=("tests/unit/test_redact.py",)),
    Target(name="bounded-eval", module="browserd/tabs/bounded_eval.py",
           tests=("tests/unit/test_eval_mutants.py",)),
    Target(name="jsontext", module="browserd/jsontext.py",
           tests=("tests/unit/test_decoding.py",)),
    Target(name="principals-store", module="browserd/principals/store.py",
           tests=("tests/unit/test_principals.py", "tests/unit/test_principals_store.py",
                  "tests/unit/test_principals_delegation.py",
                  "tests/unit/test_principals_mutants.py")),
    Target(name="principals-scopes", module="browserd/principals/scopes.py",
           tests=("tests/unit/test_principals.py", "tests/unit/test_principals_store.py",
                  "tests/unit/test_principals_delegation.py",
                  "tests/unit/test_principals_mutants.py")),
    # The scope every route declares, checked for every route of the table.
    Target(name="grants", module="browserd/http/declared.py",
           tests=("tests/unit/test_principals.py", "tests/unit/test_principals_store.py",
                  "tests/unit/test_principals_delegation.py",
                  "tests/unit/test_principals_mutants.py"),
           functions=("undeclared", "offerable", "check_table")),
    Target(name="liveness", module="browserd/supervisor/liveness.py",
           tests=("tests/unit/test_liveness.py", "tests/unit/test_liveness_mutants.py")),
    Target(name="crash", module="browserd/supervisor/crash.py",
           tests=("tests/unit/test_liveness.py", "tests/unit/test_liveness_mutants.py",
                  "tests/unit/test_restore.py", "tests/unit/test_restore_bookkeeping.py")),
    Target(name="vault-redactor", module="browserd/vault/redactor.py",
           tests=("tests/unit/test_vault_mutants.py",)),
    Target(name="vault-store", module="browserd/vault/store.py",
           tests=("tests/unit/test_vault_mutants.py",)),
    Target(name="confirm-rules", module="browserd/confirm/rules.py",
           tests=("tests/unit/test_confirm_mutants.py",)),
    Target(name="confirm-board", module="browserd/confirm/board.py",
           tests=("tests/unit/test_confirm_mutants.py",)),
    Target(name="tabrequests", module="browserd/tabrequests.py",
           tests=("tests/unit/test_tabrequests_mutants.py",)),
)

@attrs.frozen(kw_only=True)
class Named:
    """A mutation written by hand: ``old`` (found exactly once) replaced by ``new``."""

    name: str
    module: str  # path under src/
    old: str
    new: str
    tests: tuple[str, ...]
    select: str | None = None
    timeout_s: float = 300.0


#: The eight regressions the suite once missed (``--named``): each
#: must turn its tests red. Edit the text here when the code they break moves.
NAMED: tuple[Named, ...] = (
    Named(name="/act's navigate step skips the URL policy",
          module="browserd/tabs/actions/kinds/page.py",
          old='url=ctx.check_url(args["url"])', new='url=args["url"]',
          tests=("tests/integration/test_security.py",), select="s9_url_policy"),
    Named(name="the client accepts any /healthz proof", module="browserd/client.py",
          old="not isinstance(proof, str) or not hmac.compare_digest(\n"
              "            proof, healthz_proof(self._token, nonce)\n        )",
          new="not isinstance(proof, str)", tests=("tests/unit/test_client_proof.py",)),
    Named(name="the stop ladder loses its SIGTERM step", module="browserd/browser/process.py",
          old='step = "sigterm"\n                    self._signal_group(signal.SIGTERM)',
          new='step = "sigterm"', tests=("tests/unit/test_stop_ladder.py",)),
    Named(name="the stop ladder loses its SIGKILL step", module="browserd/browser/process.py",
          old='step = "sigkill"\n                    self._signal_group(signal.SIGKILL)',
          new='step = "sigkill"', tests=("tests/unit/test_stop_ladder.py",)),
    Named(name="a browser left by a dead browserd is never stopped",
          module="browserd/supervisor/supervisor.py",
          old="        await self._pid_record.stop_leftover(profile_dir)\n", new="",
          tests=("tests/unit/test_stop_ladder.py",)),
    Named(name="stop no longer ends the restart backoff wait at once",
          module="browserd/supervisor/supervisor.py",
          old="            with trio.move_on_after(delay):\n"
              "                # A stop during the backoff ends the wait at once.\n"
              "                while self._wanted:\n"
              "                    self._wake = trio.Event()\n"
              "                    await self._wake.wait()\n",
          new="            await trio.sleep(delay)\n", tests=("tests/unit/test_supervisor.py",)),
    Named(name="backoff jitter removed", module="browserd/supervisor/policy.py",
          old="return backoff * (0.5 + rng())", new="return backoff",
          tests=("tests/unit/test_supervisor.py", "tests/unit/test_supervision_data.py")),
    Named(name="no fsync of media data before the rename", module="browserd/media/store.py",
          old="            os.fsync(fd)\n", new="            pass\n",
          tests=("tests/unit/test_media_store.py",)),
    Named(name="restart budget disabled", module="browserd/supervisor/policy.py",
          old="return len(self._times) <= self.policy.budget", new="return True",
          tests=("tests/unit/test_supervisor.py",), timeout_s=120.0),
)


__all__ = ["NAMED", "TARGETS", "Named", "Target"]
