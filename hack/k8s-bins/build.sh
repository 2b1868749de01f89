#!/usr/bin/env bash
# Builds etcd, kube-apiserver, kube-controller-manager and kubectl from the Go module
# proxy at the versions pinned in ./kube/go.mod and ./etcd/go.mod, into a
# per-version cache directory outside the repository. A second call is instant.
#
# Prints the directory that holds the binaries on its last line of stdout.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
KUBE_VERSION="v1.34.3"
ETCD_VERSION="v3.6.6"
cache_root="${HCP_FLEET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hcp-fleet}"
dest="${cache_root}/k8s-bins/kube-${KUBE_VERSION}-etcd-${ETCD_VERSION}"

if [[ -x "${dest}/kube-apiserver" && -x "${dest}/kube-controller-manager" && -x "${dest}/kubectl" && -x "${dest}/etcd" ]]; then
  echo "${dest}"
  exit 0
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

export CGO_ENABLED=0 GOFLAGS=-mod=readonly
start=$SECONDS
echo ">> building etcd ${ETCD_VERSION} (about 2 minutes on a cold machine)" >&2
go build -C "${here}/etcd" -trimpath -ldflags "-s -w" -o "${work}/etcd" .
echo ">> etcd built in $((SECONDS - start))s" >&2

start=$SECONDS
echo ">> building kube-apiserver, kube-controller-manager and kubectl ${KUBE_VERSION} (about 10 minutes on a cold machine)" >&2
go build -C "${here}/kube" -trimpath -ldflags "${ldflags}" -o "${work}/" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kubectl
echo ">> kube binaries built in $((SECONDS - start))s" >&2

"${work}/kube-apiserver" --version >&2
rm -rf "${dest}"
mv "${work}" "${dest}"
trap - EXIT
echo "${dest}"
