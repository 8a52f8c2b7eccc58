#!/usr/bin/env bash
# Regenerates the Go code of proto/acms/v1 into clients/go/acmsv1 (package acmsv1, import path
# acmscontext.dev/go/acms/acmsv1). CI runs it and fails on any diff, so the code is reproducible: the buf
# binary of node_modules (npm ci) compiles the protos, and protoc-gen-go and protoc-gen-go-grpc are built at
# the pinned versions below (Go module proxy) into a cache folder named after them, once per machine.
#
# The protos' go_package (acms/clients/go/acms/v1) is left alone: proto/ is shared, and buf breaking's
# FILE_SAME_GO_PACKAGE would flag a change. The M options map each file to this module's import path instead.
set -euo pipefail
cd "$(dirname "$0")/../.."

# protoc-gen-go is pinned to the google.golang.org/protobuf of clients/go/go.mod: the generated code then
# needs no newer runtime than the module requires.
PROTOC_GEN_GO=google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
PROTOC_GEN_GO_GRPC=google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
MODULE=acmscontext.dev/go/acms
GO_PACKAGE="$MODULE/acmsv1;acmsv1"

# One folder per pair of versions: changing a pin builds the new pair beside the old one.
bin="${ACMS_CI_CACHE:-$HOME/.cache/acms-ci}/go-plugins/${PROTOC_GEN_GO##*@}-${PROTOC_GEN_GO_GRPC##*@}"
for plugin in "$PROTOC_GEN_GO" "$PROTOC_GEN_GO_GRPC"; do
  name="${plugin%@*}"
  [ -x "$bin/${name##*/}" ] || GOBIN="$bin" go install "$plugin"
done

opts=("module=$MODULE")
for f in proto/acms/v1/*.proto; do
  opts+=("M${f#proto/}=$GO_PACKAGE")
done
join() { local IFS=,; echo "$*"; }
template=$(cat <<YAML
{"version": "v2", "plugins": [
  {"local": "$bin/protoc-gen-go", "out": "clients/go", "opt": "$(join "${opts[@]}")"},
  {"local": "$bin/protoc-gen-go-grpc", "out": "clients/go", "opt": "$(join "${opts[@]}")"}
]}
YAML
)
rm -rf clients/go/acmsv1
node_modules/.bin/buf generate --template "$template" --path proto/acms/v1
