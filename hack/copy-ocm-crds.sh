#!/usr/bin/env bash
# Copies the OCM CRDs the local fleet installs from the pinned
# open-cluster-management.io/api module into internal/localfleet/crds.
# A real ACM/MCE hub has these already; only the local fleet needs them.
# Only addon v1alpha1 CRDs: the v1beta1 files serve two versions and need a
# conversion webhook that the 1.2 line does not run in-process.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
api="$(go list -m -f '{{.Dir}}' open-cluster-management.io/api)"
out=internal/localfleet/crds
rm -rf "${out}/hub" "${out}/spoke"
mkdir -p "${out}/hub" "${out}/spoke"
for f in \
  cluster/v1/0000_00_clusters.open-cluster-management.io_managedclusters.crd.yaml \
  cluster/v1beta2/0000_00_clusters.open-cluster-management.io_managedclustersets.crd.yaml \
  cluster/v1beta2/0000_01_clusters.open-cluster-management.io_managedclustersetbindings.crd.yaml \
  cluster/v1beta1/0000_02_clusters.open-cluster-management.io_placements.crd.yaml \
  cluster/v1beta1/0000_03_clusters.open-cluster-management.io_placementdecisions.crd.yaml \
  cluster/v1alpha1/0000_05_clusters.open-cluster-management.io_addonplacementscores.crd.yaml \
  addon/v1alpha1/0000_00_addon.open-cluster-management.io_clustermanagementaddons.crd.yaml \
  addon/v1alpha1/0000_01_addon.open-cluster-management.io_managedclusteraddons.crd.yaml \
  addon/v1alpha1/0000_02_addon.open-cluster-management.io_addondeploymentconfigs.crd.yaml \
  addon/v1alpha1/0000_03_addon.open-cluster-management.io_addontemplates.crd.yaml \
  work/v1/0000_00_work.open-cluster-management.io_manifestworks.crd.yaml; do
  install -m 0644 "${api}/${f}" "${out}/hub/$(basename "${f}")"
done
for f in \
  work/v1/0000_01_work.open-cluster-management.io_appliedmanifestworks.crd.yaml \
  cluster/v1alpha1/0000_02_clusters.open-cluster-management.io_clusterclaims.crd.yaml; do
  install -m 0644 "${api}/${f}" "${out}/spoke/$(basename "${f}")"
done
