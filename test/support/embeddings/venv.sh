#!/usr/bin/env bash
# Prints the path of a venv holding exactly requirements.txt (the embeddings server of the tests), creating it
# first when missing, under ${ACMS_CI_CACHE:-~/.cache/acms-ci}/py-embed-venv-<hash> (the hash over requirements.txt
# and the interpreter): as clients/python/dev-venv.sh does for the client tools.
# Safe to run concurrently: creation holds a lock, and a venv counts only once its stamp file is written.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python="${ACMS_PYTHON:-python3}"
cache="${ACMS_CI_CACHE:-$HOME/.cache/acms-ci}"
key="$({ cat "$here/requirements.txt"; "$python" -c 'import sys; print(sys.version)'; } | sha256sum | cut -c1-16)"
venv="$cache/py-embed-venv-$key"
if [ ! -f "$venv/.complete" ]; then
  mkdir -p "$cache"
  exec 9>"$venv.lock"
  flock 9
  if [ ! -f "$venv/.complete" ]; then
    rm -rf "$venv"
    "$python" -m venv "$venv" >&2
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --only-binary=:all: -r "$here/requirements.txt" >&2
    touch "$venv/.complete"
    # Venvs of older pins or interpreters are not used again by this clone.
    for old in "$cache"/py-embed-venv-*; do
      case "$old" in "$venv" | "$venv.lock") ;; *) rm -rf "$old" ;; esac
    done
  fi
  flock -u 9
fi
printf '%s\n' "$venv"
