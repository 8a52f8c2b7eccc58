#!/usr/bin/env bash
# Prints the path of a venv holding exactly requirements.txt beside this file (the Python `mcp` SDK and
# pytest), creating it first when missing: under ${ACMS_CI_CACHE:-~/.cache/acms-ci}/mcp-venv-<hash>, the hash
# taken over requirements.txt and the interpreter's version, so a changed pin makes a new one and an unchanged
# one is reused. ACMS_PYTHON picks the interpreter (default python3). Creation holds a lock; a venv counts only
# once its stamp file is written. (Its own prefix: clients/python/dev-venv.sh prunes py-venv-* of other pins.)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python="${ACMS_PYTHON:-python3}"
cache="${ACMS_CI_CACHE:-$HOME/.cache/acms-ci}"
key="$({ cat "$here/requirements.txt"; "$python" -c 'import sys; print(sys.version)'; } | sha256sum | cut -c1-16)"
venv="$cache/mcp-venv-$key"
if [ ! -f "$venv/.complete" ]; then
  mkdir -p "$cache"
  exec 9>"$venv.lock"
  flock 9
  if [ ! -f "$venv/.complete" ]; then
    rm -rf "$venv"
    "$python" -m venv "$venv" >&2
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --only-binary=:all: -r "$here/requirements.txt" >&2
    touch "$venv/.complete"
    for old in "$cache"/mcp-venv-*; do
      case "$old" in "$venv" | "$venv.lock") ;; *) rm -rf "$old" ;; esac
    done
  fi
  flock -u 9
fi
printf '%s\n' "$venv"
