#!/usr/bin/env bash
# Builds the tracing tests' OpenTelemetry Collector (main.go: the OTLP receiver and the OTLP/HTTP exporter of
# the collector release go.mod pins, from the Go module proxy) once, and keeps it under the CI cache, named by
# the hash of its sources: later runs reuse it. Prints the binary's path. .ci/run runs it before the tests;
# test/support/otel-collector.ts runs it too (a no-op once built).
set -euo pipefail
cd "$(dirname "$0")"
export PATH="/usr/local/go/bin:$PATH"
cache="${ACMS_CI_CACHE:-$HOME/.cache/acms-ci}"
hash="$(cat go.mod go.sum main.go | sha256sum | cut -c1-16)"
bin="$cache/otelcol-$hash"
if [ ! -x "$bin" ]; then
  mkdir -p "$cache"
  go build -trimpath -ldflags="-s -w" -o "$bin.$$" . >&2
  mv "$bin.$$" "$bin"
fi
echo "$bin"
