#!/usr/bin/env bash
# Builds OLM's olm-operator (cmd/olm) from the Go module proxy at the version
# pinned in ./go.mod, and ./olm-installplan (the catalog-operator's InstallPlan
# steps for a bundle directory, by OLM's own resolver), into a cache directory
# outside the repository keyed by the OLM version and this module's sources
# (this script included), next to the OLM CRDs of the operator-framework/api
# version olm-operator is built with (so the schemas match what it writes). A
# second call is instant; a call while another builds waits for that build.
#
# Prints the directory that holds olm, olm-installplan and crds/ on its last
# line of stdout.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OLM_VERSION="v0.46.0"
cache_root="${HCP_FLEET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hcp-fleet}"
sources="$(cd "${here}" && cat build.sh go.mod go.sum olm-installplan/*.go | sha256sum | cut -c1-12)"
dest="${cache_root}/olm/olm-${OLM_VERSION}-${sources}"

built() { [[ -x "${dest}/olm" && -x "${dest}/olm-installplan" && -d "${dest}/crds" ]]; }
if built; then
  echo "${dest}"
  exit 0
fi

# One build at a time per cache: CI builds it in the background while
# test/olm, which runs this script too, may already want it. The second
# caller waits for the first (flock) and then finds the build done instead
# of racing it and compiling it again.
mkdir -p "${cache_root}/olm"
exec 9>"${cache_root}/olm/.lock"
flock 9
if built; then
  echo "${dest}"
  exit 0
fi
work="$(mktemp -d "${cache_root}/olm/.build.XXXXXX")"
trap 'rm -rf "${work}"' EXIT

# Go's default flags (no CGO_ENABLED=0, no -trimpath), as every other build
# here uses: the standard library and any package at a version the product
# also uses are then compiled once for all of them.
export GOFLAGS=-mod=readonly
start=$SECONDS
echo ">> building olm-operator ${OLM_VERSION} (several minutes on a cold machine)" >&2
go build -C "${here}" \
  -ldflags "-s -w -X github.com/operator-framework/operator-lifecycle-manager/pkg/version.OLMVersion=${OLM_VERSION#v}" \
  -o "${work}/olm" github.com/operator-framework/operator-lifecycle-manager/cmd/olm
echo ">> olm-operator built in $((SECONDS - start))s" >&2
go build -C "${here}" -ldflags "-s -w" -o "${work}/olm-installplan" ./olm-installplan

api_dir="$(go list -C "${here}" -m -f '{{.Dir}}' github.com/operator-framework/api)"
mkdir -p "${work}/crds"
cp "${api_dir}"/crds/operators.coreos.com_*.yaml "${work}/crds/"
chmod -R u+w "${work}/crds"

"${work}/olm" --version >&2
rm -rf "${dest}"
mv "${work}" "${dest}"
trap - EXIT
echo "${dest}"
