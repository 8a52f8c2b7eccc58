#!/usr/bin/env bash
# Regenerates the Go client code under clients/go/acms/v1 (package acmsv1, import path
# acms/clients/go/acms/v1: the go_package option of every proto/acms/v1 file) from proto/ with Debian's
# protoc, protoc-gen-go and protoc-gen-go-grpc (apt-get install protobuf-compiler protoc-gen-go protoc-gen-go-grpc).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=clients/go
rm -rf "$out/acms"
protoc --go_out="$out" --go_opt=paths=source_relative --go-grpc_out="$out" --go-grpc_opt=paths=source_relative \
  -I proto -I proto-vendor proto/acms/v1/*.proto
