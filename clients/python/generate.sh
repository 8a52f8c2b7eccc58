#!/usr/bin/env bash
# Regenerates the Python stubs under clients/python/gen from proto/ with Debian's protoc and gRPC plugin
# (apt-get install protobuf-compiler protobuf-compiler-grpc). google/rpc lands in the `google` namespace
# package next to the real google.protobuf (no __init__.py, so neither shadows the other); the vendored
# grpc/* protos are left out because a `grpc` package here would shadow grpcio.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=clients/python/gen
rm -rf "$out"
mkdir -p "$out"
protoc --python_out="$out" --grpc_out="$out" --plugin=protoc-gen-grpc=/usr/bin/grpc_python_plugin \
  -I proto -I proto-vendor proto/acms/v1/*.proto
protoc --python_out="$out" -I proto-vendor proto-vendor/google/rpc/status.proto proto-vendor/google/rpc/error_details.proto
