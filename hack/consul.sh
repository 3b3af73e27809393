#!/usr/bin/env bash
# consul.sh provides a real Consul agent for the tests of the TargetSource's consul provider
# (make test-consul), which start it as `consul agent -dev`. No release binary can be downloaded here, so it
# is built from source through the Go module proxy, once, and cached outside the repository like the control
# plane (hack/control-plane.sh): ${GNMIC_OPERATOR_CACHE:-~/.cache/gnmic-operator}/consul/<version>/consul.
#
# Usage: hack/consul.sh
# The last line printed on stdout is the path of the consul binary. A warm cache answers in milliseconds;
# a cold build takes about six minutes of both cores (docs/target-sources-consul.md).
#
# Why v1.16.3: it is the newest Consul the module proxy serves that is still under the MPL 2.0; from 1.17
# (and 1.16.6) Consul is under the Business Source License. The client library the operator links,
# github.com/hashicorp/consul/api, stays MPL 2.0 and talks to 1.16 and newer servers alike.
#
# `go install github.com/hashicorp/consul@v1.16.3` refuses: Consul's go.mod replaces its own submodules (api,
# sdk, proto-public, envoyextensions, troubleshoot) with directories. A wrapper module that requires Consul
# ignores those replaces and takes the submodules' published versions from the proxy instead.
set -euo pipefail

CONSUL_VERSION=${CONSUL_VERSION:-v1.16.3}

log() { echo "consul: $*" >&2; }

CACHE_ROOT=${GNMIC_OPERATOR_CACHE:-$HOME/.cache/gnmic-operator}
OUT="$CACHE_ROOT/consul/${CONSUL_VERSION}"
BIN="$OUT/consul"

if [[ -x "$BIN" ]]; then
  log "cached in $OUT"
  echo "$BIN"
  exit 0
fi

export GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=0
dir="$CACHE_ROOT/build/consul-${CONSUL_VERSION}"
if [[ ! -s "$dir/go.sum" ]]; then
  mkdir -p "$dir"
  # The excludes are Consul's own (its go.mod): go-msgpack 1.1.5 and 1.1.6 break its RPC encoding.
  cat >"$dir/go.mod" <<EOF
module gnmic-operator.local/consul-build

go 1.26.0

require github.com/hashicorp/consul ${CONSUL_VERSION}

exclude (
	github.com/hashicorp/go-msgpack v1.1.5
	github.com/hashicorp/go-msgpack v1.1.6
)
EOF
  printf 'package build\n' >"$dir/doc.go"
  # The checksum database has no entry for some modules Consul needs (hcp-sdk-go v0.55.0, envoyextensions
  # v0.4.1), so go would refuse them. Their hashes come from go.sum files that are themselves verified
  # through the database: Consul's own (its module is), and, for envoyextensions (which Consul only ever
  # built from its own directory), those recorded by Consul's troubleshoot v0.3.1 and Consul v1.16.2.
  consul_dir=$(cd "$dir" && go mod download -json "github.com/hashicorp/consul@${CONSUL_VERSION}" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  [[ -f "$consul_dir/go.sum" ]] || { log "could not download github.com/hashicorp/consul@${CONSUL_VERSION}"; exit 1; }
  {
    cat "$consul_dir/go.sum"
    echo 'github.com/hashicorp/consul/envoyextensions v0.4.1 h1:7s3IXE+qmwjPbZPva+8BjHLrpkFrFkNE+z/6X/O6PQc='
    echo 'github.com/hashicorp/consul/envoyextensions v0.4.1/go.mod h1:PkLAV99qviACPT7v8Pn7d/vacZixC8/4fuZpR7Rf7vA='
  } >"$dir/go.sum"
fi

mkdir -p "$OUT"
start=$SECONDS
log "building consul from github.com/hashicorp/consul@${CONSUL_VERSION} (a cold build takes minutes)"
(cd "$dir" && go build -trimpath -ldflags "-s -w" -o "$BIN.tmp" github.com/hashicorp/consul)
mv "$BIN.tmp" "$BIN"
log "built consul in $((SECONDS - start))s"
echo "$BIN"
