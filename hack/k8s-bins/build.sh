#!/usr/bin/env bash
# Builds etcd, kube-apiserver, kube-controller-manager and kubectl from the Go module
# proxy at the versions pinned in ./kube/go.mod and ./etcd/go.mod, into a
# per-version cache directory outside the repository. A second call is instant.
#
# The build uses Go's defaults (cgo as the environment has it, no -trimpath),
# as the product's own builds and tests do, and the two go.mod files pin the
# product's versions of every module they share with it: the packages both
# compile (k8s.io/client-go, k8s.io/apiserver, grpc, ...) then have the same
# build-cache keys, and whichever build comes second reuses them. RECIPE
# names this way of building; bump it (and internal/k8sbins.Recipe) when the
# flags or the pinned modules change, so every machine's cache rebuilds.
#
# Prints the directory that holds the binaries on its last line of stdout.
# With --download, only downloads the modules the build needs (when the
# binaries are not cached yet): CI does that while the product compiles.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
KUBE_VERSION="v1.34.3"
ETCD_VERSION="v3.6.6"
RECIPE="r2"
cache_root="${HCP_FLEET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hcp-fleet}"
dest="${cache_root}/k8s-bins/kube-${KUBE_VERSION}-etcd-${ETCD_VERSION}-${RECIPE}"

if [[ -x "${dest}/kube-apiserver" && -x "${dest}/kube-controller-manager" && -x "${dest}/kubectl" && -x "${dest}/etcd" ]]; then
  echo "${dest}"
  exit 0
fi

if [[ "${1:-}" == "--download" ]]; then
  (cd "${here}/etcd" && go mod download) && (cd "${here}/kube" && go mod download)
  exit
fi

mkdir -p "${cache_root}/k8s-bins"
work="$(mktemp -d "${cache_root}/k8s-bins/.build.XXXXXX")"
trap 'rm -rf "${work}"' EXIT

minor="${KUBE_VERSION#v1.}"; minor="${minor%%.*}"
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X ${pkg}.gitVersion=${KUBE_VERSION} -X ${pkg}.gitMajor=1 -X ${pkg}.gitMinor=${minor}"
  ldflags+=" -X ${pkg}.gitTreeState=clean -X ${pkg}.buildDate=1970-01-01T00:00:00Z"
done

export GOFLAGS=-mod=readonly
start=$SECONDS
echo ">> building etcd ${ETCD_VERSION} (seconds once the product is compiled, about 1 minute on a cold machine)" >&2
go build -C "${here}/etcd" -ldflags "-s -w" -o "${work}/etcd" .
echo ">> etcd built in $((SECONDS - start))s" >&2

start=$SECONDS
echo ">> building kube-apiserver, kube-controller-manager and kubectl ${KUBE_VERSION} (about 2 minutes once the product is compiled, 5 on a cold machine)" >&2
go build -C "${here}/kube" -ldflags "${ldflags}" -o "${work}/" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kubectl
echo ">> kube binaries built in $((SECONDS - start))s" >&2

"${work}/kube-apiserver" --version >&2
rm -rf "${dest}"
mv "${work}" "${dest}"
trap - EXIT
echo "${dest}"
