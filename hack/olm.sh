#!/usr/bin/env bash
# Builds Operator Lifecycle Manager v0 (olm-operator and catalog-operator) and opm at pinned versions from
# the Go module proxy, because neither their images nor their release binaries can be fetched here.
# `go install module/cmd@version` cannot be used: it asks the proxy for the module's version list, which
# the proxy refuses for github.com/operator-framework/*; the exact versions download, so the script
# builds from the downloaded module source. No source is changed.
#
# Both build with CGO_ENABLED=0, statically, as OLM's own Makefile builds its images. opm's release binaries
# link SQLite through cgo for the deprecated SQLite catalogs; the file-based catalogs used here (opm render
# of a bundle directory, opm validate, opm serve) never touch it, and compiling SQLite's C amalgamation is
# the longest step of a cold build. The cache directories name the static builds (-static).
#
# Usage: hack/olm.sh [BIN_DIR]   (default: ./bin)
# Result: BIN_DIR/olm, BIN_DIR/catalog, BIN_DIR/opm, and the OLM CRDs in BIN_DIR/olm-crds/.
# The binaries are cached under ~/.cache/gnmic-operator/tools (GNMIC_OPERATOR_CACHE) for fresh clones.
set -euo pipefail

OLM_VERSION="${OLM_VERSION:-v0.38.0}"
OPM_VERSION="${OPM_VERSION:-v1.59.0}"
BIN_DIR="$(mkdir -p "${1:-bin}" && cd "${1:-bin}" && pwd)"
cache="${GNMIC_OPERATOR_CACHE:-$HOME/.cache/gnmic-operator}/tools"
olm_cache="${cache}/olm-${OLM_VERSION}-static"
opm_cache="${cache}/opm-${OPM_VERSION}-static"

export GOTOOLCHAIN=local

module_dir() {
	go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'
}

# build MODULE@VERSION OUT_DIR TAGS LDFLAGS CMD...: go build each ./cmd/CMD of the module into OUT_DIR.
build() {
	local module="$1" out="$2" tags="$3" ldflags="$4"
	shift 4
	local src work
	src="$(module_dir "${module}")"
	[[ -d "${src}" ]] || { echo "${module}: module source not found" >&2; exit 1; }
	work="$(mktemp -d)"
	cp -R "${src}/." "${work}/src"
	chmod -R u+w "${work}/src"
	mkdir -p "${out}.tmp"
	local started=${SECONDS}
	for cmd in "$@"; do
		(cd "${work}/src" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -tags "${tags}" -ldflags "${ldflags}" \
			-o "${out}.tmp/${cmd}" "./cmd/${cmd}")
	done
	if [[ -d "${work}/src/deploy/chart/crds" ]]; then
		cp -R "${work}/src/deploy/chart/crds" "${out}.tmp/crds"
	fi
	rm -rf "${work}"
	rm -rf "${out}" && mv "${out}.tmp" "${out}"
	echo "built ${module} ($*) in $((SECONDS - started)) s" >&2
}

if [[ ! -x "${olm_cache}/olm" || ! -x "${olm_cache}/catalog" ]]; then
	echo "building OLM ${OLM_VERSION} from the Go module proxy" >&2
	pkg=github.com/operator-framework/operator-lifecycle-manager/pkg/version
	build "github.com/operator-framework/operator-lifecycle-manager@${OLM_VERSION}" "${olm_cache}" json1 \
		"-s -w -X '${pkg}.OLMVersion=${OLM_VERSION#v}'" olm catalog
fi
if [[ ! -x "${opm_cache}/opm" ]]; then
	echo "building opm ${OPM_VERSION} from the Go module proxy" >&2
	pkg=github.com/operator-framework/operator-registry/cmd/opm/version
	build "github.com/operator-framework/operator-registry@${OPM_VERSION}" "${opm_cache}" \
		json1,containers_image_openpgp "-s -w -X '${pkg}.opmVersion=${OPM_VERSION}'" opm
fi

cp "${olm_cache}/olm" "${olm_cache}/catalog" "${opm_cache}/opm" "${BIN_DIR}/"
rm -rf "${BIN_DIR}/olm-crds" && cp -R "${olm_cache}/crds" "${BIN_DIR}/olm-crds"
