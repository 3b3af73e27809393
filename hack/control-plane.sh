#!/usr/bin/env bash
# control-plane.sh provides the Kubernetes control-plane binaries the test suites run against,
# on machines with neither Docker nor internet access (only the Go module proxy).
#
# Usage: hack/control-plane.sh [envtest|all]
#   envtest  kube-apiserver, etcd, kubectl           (what envtest needs)
#   all      the above plus kube-controller-manager, kube-scheduler, kwok (what e2e needs)
# The last line printed on stdout is the directory that holds the binaries (use it as KUBEBUILDER_ASSETS).
#
# Order of preference:
#   1. KUBEBUILDER_ASSETS, when it is set and already holds every binary asked for;
#   2. setup-envtest (only for the envtest set; it needs internet and fails fast without it);
#   3. a build from source through the Go module proxy, cached outside the repository in
#      ${GNMIC_OPERATOR_CACHE:-~/.cache/gnmic-operator}/k8s/<versions>/. A warm cache answers in milliseconds.
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-1.37.2}
ETCD_VERSION=${ETCD_VERSION:-3.6.16}
KWOK_VERSION=${KWOK_VERSION:-0.8.0}
SETUP_ENVTEST_VERSION=${SETUP_ENVTEST_VERSION:-v0.25.1}
SET=${1:-envtest}

case "$SET" in
  envtest) wanted=(kube-apiserver etcd kubectl) ;;
  all) wanted=(kube-apiserver etcd kubectl kube-controller-manager kube-scheduler kwok) ;;
  *) echo "usage: $0 [envtest|all]" >&2; exit 2 ;;
esac

log() { echo "control-plane: $*" >&2; }

has_all() {
  local dir=$1 b
  for b in "${wanted[@]}"; do [[ -x "$dir/$b" ]] || return 1; done
}

# 1. An explicit KUBEBUILDER_ASSETS wins when it is complete.
if [[ -n "${KUBEBUILDER_ASSETS:-}" ]] && has_all "$KUBEBUILDER_ASSETS"; then
  log "using KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS"
  echo "$KUBEBUILDER_ASSETS"
  exit 0
fi

CACHE_ROOT=${GNMIC_OPERATOR_CACHE:-$HOME/.cache/gnmic-operator}
OUT="$CACHE_ROOT/k8s/v${K8S_VERSION}-etcd${ETCD_VERSION}-kwok${KWOK_VERSION}"
mkdir -p "$OUT"

if has_all "$OUT"; then
  log "cached in $OUT"
  echo "$OUT"
  exit 0
fi

# 2. setup-envtest, for the binaries it knows. Without internet it fails quickly; that is expected here.
if [[ ! -x "$OUT/kube-apiserver" && -z "${SKIP_SETUP_ENVTEST:-}" ]]; then
  log "trying setup-envtest ${SETUP_ENVTEST_VERSION} for ${K8S_VERSION}"
  if dir=$(timeout 180 go run "sigs.k8s.io/controller-runtime/tools/setup-envtest@${SETUP_ENVTEST_VERSION}" \
      use "${K8S_VERSION}" --bin-dir "$CACHE_ROOT/setup-envtest" -p path 2>/dev/null) && [[ -x "$dir/kube-apiserver" ]]; then
    for b in kube-apiserver etcd kubectl; do [[ -x "$dir/$b" ]] && cp "$dir/$b" "$OUT/$b.tmp" && mv "$OUT/$b.tmp" "$OUT/$b"; done
    log "setup-envtest provided the envtest binaries"
  else
    log "setup-envtest could not download; building from source through the Go module proxy"
  fi
fi

export GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=0
WORK="$CACHE_ROOT/build"
mkdir -p "$WORK"

# A wrapper module that requires k8s.io/kubernetes and pins every staging module to its published twin.
kubernetes_module() {
  local dir="$WORK/kubernetes-v${K8S_VERSION}"
  if [[ ! -f "$dir/go.sum" ]]; then
    mkdir -p "$dir"
    log "resolving k8s.io/kubernetes v${K8S_VERSION}"
    local gomod
    gomod=$(cd "$dir" && go mod download -json "k8s.io/kubernetes@v${K8S_VERSION}" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
    {
      echo "module gnmic-operator.local/kubernetes-build"
      echo
      echo "go 1.26.0"
      echo
      echo "require k8s.io/kubernetes v${K8S_VERSION}"
      echo
      echo "replace ("
      grep -E '^\s*k8s\.io/[a-z0-9-]+ => \./staging/' "$gomod" | awk -v v="v0.${K8S_VERSION#1.}" '{print "\t" $1 " => " $1 " " v}'
      echo ")"
    } >"$dir/go.mod"
    printf 'package build\n' >"$dir/doc.go"
    touch "$dir/go.sum"
  fi
  echo "$dir"
}

simple_module() { # name module version
  local dir="$WORK/$1"
  if [[ ! -f "$dir/go.mod" ]]; then
    mkdir -p "$dir"
    printf 'module gnmic-operator.local/%s\n\ngo 1.26.0\n\nrequire %s %s\n' "$1" "$2" "$3" >"$dir/go.mod"
    printf 'package build\n' >"$dir/doc.go"
    touch "$dir/go.sum"
  fi
  echo "$dir"
}

build() { # binary module-dir package ldflags
  local bin=$1 dir=$2 pkg=$3 ldflags=$4 start=$SECONDS
  if [[ -x "$OUT/$bin" ]]; then return; fi
  log "building $bin from $pkg (one binary at a time; a cold build takes minutes)"
  (cd "$dir" && go build -trimpath -ldflags "-s -w $ldflags" -o "$OUT/$bin.tmp" "$pkg")
  mv "$OUT/$bin.tmp" "$OUT/$bin"
  log "built $bin in $((SECONDS - start))s"
}

minor=${K8S_VERSION#1.}; minor=${minor%%.*}
k8s_ldflags=""
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  k8s_ldflags+=" -X $p.gitVersion=v${K8S_VERSION} -X $p.gitMajor=1 -X $p.gitMinor=${minor}"
  k8s_ldflags+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
done

for b in "${wanted[@]}"; do
  case "$b" in
    kube-apiserver|kube-controller-manager|kube-scheduler|kubectl)
      build "$b" "$(kubernetes_module)" "k8s.io/kubernetes/cmd/$b" "$k8s_ldflags" ;;
    etcd)
      build etcd "$(simple_module "etcd-v${ETCD_VERSION}" go.etcd.io/etcd/server/v3 "v${ETCD_VERSION}")" \
        go.etcd.io/etcd/server/v3 "-X go.etcd.io/etcd/api/v3/version.GitSHA=v${ETCD_VERSION}" ;;
    kwok)
      build kwok "$(simple_module "kwok-v${KWOK_VERSION}" sigs.k8s.io/kwok "v${KWOK_VERSION}")" \
        sigs.k8s.io/kwok/cmd/kwok "-X sigs.k8s.io/kwok/pkg/consts.Version=v${KWOK_VERSION}" ;;
  esac
done

has_all "$OUT" || { log "missing binaries in $OUT"; exit 1; }
log "ready in $OUT"
echo "$OUT"
