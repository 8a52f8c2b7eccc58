#!/usr/bin/env bash
# Prints the path of a venv holding exactly requirements.txt beside this file (the embeddings server of the
# tests), creating it first when missing, in ${ACMS_CI_CACHE:-~/.cache/acms-ci}/py-embed-venv-<hash>
# (scripts/pinned-venv.sh says how it is kept and reused).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
exec bash "$here/../../../scripts/pinned-venv.sh" "$here/requirements.txt" py-embed-venv
