#!/usr/bin/env bash
# Regenerates the HTTP/JSON description of proto/acms/v1 from the protos and their comments:
#   openapi/acms.openapi.json  OpenAPI 3.1 of the Connect protocol's JSON form (POST /<package.Service>/<Method>),
#                              served by the server at GET /openapi.json
#   docs/api-reference.md      one entry per RPC, message and enum, from the proto comments
# CI runs it and fails on any diff. The buf binary of node_modules (npm ci) compiles the protos; the two protoc
# plugins are built at the pinned versions below (Go module proxy) into a cache folder named after them, once
# per machine.
set -euo pipefail
cd "$(dirname "$0")/.."

CONNECT_OPENAPI=github.com/sudorandom/protoc-gen-connect-openapi@v0.17.0
PROTOC_GEN_DOC=github.com/pseudomuto/protoc-gen-doc/cmd/protoc-gen-doc@v1.5.1

bin="${ACMS_CI_CACHE:-$HOME/.cache/acms-ci}/api-doc-plugins/${CONNECT_OPENAPI##*@}-${PROTOC_GEN_DOC##*@}"
mkdir -p "$bin"
if [ ! -x "$bin/protoc-gen-connect-openapi" ]; then
  # `go install module@version` refuses this module: the proxy answers its version list with 403, which
  # go install reads for deprecations. Building it inside a throw-away module pinned to the same version
  # resolves the same dependencies (the module's own go.mod, by minimal version selection).
  tmp="$(mktemp -d)"
  (cd "$tmp" && go mod init acms-api-doc-plugins >/dev/null 2>&1 && go get "$CONNECT_OPENAPI" \
    && GOBIN="$bin" go install "${CONNECT_OPENAPI%@*}")
  rm -rf "$tmp"
fi
[ -x "$bin/protoc-gen-doc" ] || GOBIN="$bin" go install "$PROTOC_GEN_DOC"

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
template=$(cat <<JSON
{"version": "v2", "plugins": [
  {"local": "$bin/protoc-gen-connect-openapi", "out": "$out/openapi", "strategy": "all",
   "opt": ["format=json", "path=acms.openapi.json", "base=openapi/base.json", "with-streaming"]},
  {"local": "$bin/protoc-gen-doc", "out": "$out/docs", "strategy": "all", "opt": ["markdown,api-reference.md"]}
]}
JSON
)
node_modules/.bin/buf generate --template "$template" --path proto/acms/v1
cp "$out/openapi/acms.openapi.json" openapi/acms.openapi.json
cp "$out/docs/api-reference.md" docs/api-reference.md
