#!/usr/bin/env bash
# Prints the path of a venv holding exactly requirements-dev.txt (grpcio-tools, mypy-protobuf, mypy, pytest,
# hatchling...), creating it first when missing, in ${ACMS_CI_CACHE:-~/.cache/acms-ci}/py-venv-<hash>
# (scripts/pinned-venv.sh says how it is kept and reused).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
exec bash "$here/../../scripts/pinned-venv.sh" "$here/requirements-dev.txt" py-venv
