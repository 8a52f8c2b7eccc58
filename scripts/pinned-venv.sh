#!/usr/bin/env bash
# Usage: pinned-venv.sh <requirements.txt> <name>
# Prints the path of a venv holding exactly <requirements.txt>, creating it first when missing. It lives outside
# the clone, in ${ACMS_CI_CACHE:-~/.cache/acms-ci}/<name>-<hash>, the hash taken over the requirements and the
# interpreter's version: a changed pin or Python makes a new one, an unchanged one is reused (pip's own cache
# keeps the downloads), and the venvs of older pins under the same <name> are removed. ACMS_PYTHON picks the
# interpreter (default python3; 3.11 or newer). Safe to run concurrently: creation holds a lock, and a venv
# counts only once its stamp file is written. Wheels only (--only-binary): nothing is compiled.
set -euo pipefail
requirements="$1"
name="$2"
python="${ACMS_PYTHON:-python3}"
cache="${ACMS_CI_CACHE:-$HOME/.cache/acms-ci}"
key="$({ cat "$requirements"; "$python" -c 'import sys; print(sys.version)'; } | sha256sum | cut -c1-16)"
venv="$cache/$name-$key"
if [ ! -f "$venv/.complete" ]; then
  mkdir -p "$cache"
  exec 9>"$venv.lock"
  flock 9
  if [ ! -f "$venv/.complete" ]; then
    rm -rf "$venv"
    "$python" -m venv "$venv" >&2
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --only-binary=:all: -r "$requirements" >&2
    touch "$venv/.complete"
    # Venvs of older pins or interpreters are not used again by this clone.
    for old in "$cache/$name"-*; do
      case "$old" in "$venv" | "$venv.lock") ;; *) rm -rf "$old" ;; esac
    done
  fi
  flock -u 9
fi
printf '%s\n' "$venv"
