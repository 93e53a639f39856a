#!/usr/bin/env bash
# browserd set-up on a fresh Debian/Ubuntu (or macOS with Chrome installed).
#
#   bash deploy/setup.sh serve   install what is missing, then run the service
#   bash deploy/setup.sh test    install what is missing (test extras too), then lint,
#                                type-check and run the whole test suite
#
# Chromium comes from the system package manager only (apt-get install chromium);
# nothing is ever downloaded from anywhere else.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
VENV=${BROWSERD_VENV:-$ROOT/.venv}
# Python caches compiled modules unless told not to; the suite starts ~300 Python
# processes (services, CLI runs), which would otherwise each compile from source.
unset PYTHONDONTWRITEBYTECODE
MODE=${1:-}
shift || true

say() { printf '[setup] %s\n' "$*" >&2; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    say "need root for: $*"; exit 1; fi
}

APT_UPDATED=0
apt_install() {
  command -v apt-get >/dev/null || { say "no apt-get: install $* yourself"; exit 1; }
  if [ "$APT_UPDATED" = 0 ]; then as_root apt-get update -q >&2; APT_UPDATED=1; fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >&2
}

have_browser() {
  [ -n "${BROWSERD_BROWSER:-}" ] && return 0
  [ "$(uname)" = Darwin ] && return 0   # detected in /Applications at run time
  for b in chromium chromium-browser google-chrome google-chrome-stable microsoft-edge brave-browser; do
    command -v "$b" >/dev/null && return 0
  done
  return 1
}

ensure_browser() {
  if ! have_browser; then
    say "installing Chromium from the system packages"
    apt_install chromium
  fi
}

ensure_python() {
  local py=${PYTHON:-python3}
  if ! "$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    say "browserd needs Python >= 3.11"; apt_install python3 python3-venv
  fi
  if [ ! -x "$VENV/bin/python" ]; then
    if ! "$py" -m venv "$VENV" >/dev/null 2>&1; then
      rm -rf "$VENV"; apt_install python3-venv; "$py" -m venv "$VENV"
    fi
  fi
  local extras=$1 stamp="$VENV/.browserd-installed-${1:-base}" target=.
  [ -n "$extras" ] && target=".[$extras]"
  if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    say "installing browserd${extras:+[$extras]} into $VENV"
    pip_install "$target"
    touch "$stamp"
  fi
}

# uv (from PyPI) resolves and installs the same packages as pip in a few seconds
# where pip takes ~25 s of CPU on a fresh venv; pip does it when uv can't be had.
pip_install() {
  local pip=("$VENV/bin/python" -m pip install -q --disable-pip-version-check)
  if [ ! -x "$VENV/bin/uv" ]; then "${pip[@]}" uv >&2 || say "no uv: installing with pip"; fi
  if [ -x "$VENV/bin/uv" ] && "$VENV/bin/uv" pip install -q --python "$VENV/bin/python" -e "$1" >&2; then
    return 0
  fi
  "${pip[@]}" -e "$1" >&2
}

# The suite's JavaScript (tests/js/package.json): real code editors served to
# Chromium and the typed-client check (openapi-typescript + tsc), from the npm
# registry at the versions package-lock.json pins. Needs node and npm (apt).
ensure_test_js() {
  command -v npm >/dev/null || apt_install nodejs npm
  local stamp=tests/js/node_modules/.browserd-installed
  if [ ! -f "$stamp" ] || [ tests/js/package-lock.json -nt "$stamp" ]; then
    say "installing the suite's npm packages into tests/js/node_modules"
    npm ci --prefix tests/js --no-audit --no-fund --loglevel=error >&2
    touch "$stamp"
  fi
}

case "$MODE" in
  serve)
    ensure_browser
    ensure_python ""
    exec "$VENV/bin/browserd" serve "$@"
    ;;
  test)
    ensure_browser
    ensure_python test
    # `ip netns`: the non-loopback TLS test makes a network namespace of its own.
    command -v ip >/dev/null || apt_install iproute2
    # ffmpeg (and ffprobe): record videos (POST /record/start {video: true}) and their tests.
    command -v ffmpeg >/dev/null || apt_install --no-install-recommends ffmpeg
    ensure_test_js
    say "ruff";  "$VENV/bin/ruff" check src tests supervision bench
    # mypy's cache outside the clone, as uv's is: a fresh clone type-checks in
    # ~1 s instead of ~10 (mypy checks every cached module against its source).
    say "mypy";  "$VENV/bin/mypy" --cache-dir "${XDG_CACHE_HOME:-$HOME/.cache}/browserd/mypy"
    say "pytest"
    # Two workers, each running whole test files with its own browserd
    # (BROWSERD_TEST_WORKERS=0 runs everything in this process).
    exec "$VENV/bin/pytest" -q -p no:cacheprovider -n "${BROWSERD_TEST_WORKERS:-2}" \
      --dist loadfile "$@"
    ;;
  *)
    echo "usage: bash deploy/setup.sh serve|test [args...]" >&2; exit 2 ;;
esac
