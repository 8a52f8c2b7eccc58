#!/usr/bin/env bash
# Prints the path of a venv holding exactly requirements.txt beside this file (the Python `mcp` SDK and
# pytest), creating it first when missing, in ${ACMS_CI_CACHE:-~/.cache/acms-ci}/mcp-venv-<hash>
# (scripts/pinned-venv.sh says how it is kept and reused).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
exec bash "$here/../../../scripts/pinned-venv.sh" "$here/requirements.txt" mcp-venv
