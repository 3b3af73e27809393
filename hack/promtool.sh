#!/usr/bin/env bash
# promtool.sh provides Prometheus's promtool, which checks and unit-tests the alerting rules of
# config/prometheus (make test-alerts). No release binary can be downloaded here, so it is built from source
# through the Go module proxy, once, and cached outside the repository like the control plane
# (hack/control-plane.sh): ${GNMIC_OPERATOR_CACHE:-~/.cache/gnmic-operator}/promtool/<version>/promtool.
#
# Usage: hack/promtool.sh
# The last line printed on stdout is the path of the promtool binary. A warm cache answers in milliseconds;
# a cold build took about six minutes on a 2-core machine (docs/development.md).
set -euo pipefail

PROMETHEUS_VERSION=${PROMETHEUS_VERSION:-v0.316.0}

log() { echo "promtool: $*" >&2; }

CACHE_ROOT=${GNMIC_OPERATOR_CACHE:-$HOME/.cache/gnmic-operator}
OUT="$CACHE_ROOT/promtool/${PROMETHEUS_VERSION}"
BIN="$OUT/promtool"

if [[ -x "$BIN" ]]; then
  log "cached in $OUT"
  echo "$BIN"
  exit 0
fi

export GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=0
# A wrapper module that requires github.com/prometheus/prometheus at the pinned version.
dir="$CACHE_ROOT/build/prometheus-${PROMETHEUS_VERSION}"
if [[ ! -f "$dir/go.mod" ]]; then
  mkdir -p "$dir"
  printf 'module gnmic-operator.local/promtool-build\n\ngo 1.26.0\n\nrequire github.com/prometheus/prometheus %s\n' \
    "$PROMETHEUS_VERSION" >"$dir/go.mod"
  printf 'package build\n' >"$dir/doc.go"
  touch "$dir/go.sum"
fi

mkdir -p "$OUT"
start=$SECONDS
log "building promtool from github.com/prometheus/prometheus@${PROMETHEUS_VERSION} (a cold build takes minutes)"
# remove_all_sd leaves out Prometheus's service discovery plugins (cloud SDKs), which checking and testing
# rules never use: half the build.
# promtool reports its version from these variables, as Prometheus's release build sets them.
# Module v0.316.0 is Prometheus 3.16.0.
release=${PROMETHEUS_VERSION#v0.}
release="${release:0:1}.${release:1}"
ldflags="-s -w -X github.com/prometheus/common/version.Version=${release}"
(cd "$dir" && go build -trimpath -tags remove_all_sd -ldflags "$ldflags" -o "$BIN.tmp" github.com/prometheus/prometheus/cmd/promtool)
mv "$BIN.tmp" "$BIN"
log "built promtool in $((SECONDS - start))s"
echo "$BIN"
