#!/usr/bin/env bash
# `make verify`: reruns every generator (`make generate manifests`: deepcopy,
# apply configurations, our CRDs, docs/api.md, manifests/hypershift, the OCM
# CRDs the local fleet installs, the CAPI and Agent-provider CRDs and types,
# the OLM bundle) and fails when that would change the tree: a generated
# file that is stale, edited by hand, or new and not committed.
#
# The generators run in a copy of the tree, never in it: the files git would
# commit (tracked, and untracked but not ignored), as they are now, uncommitted
# edits included, made into a one-commit repository. `git status` there says
# what the generators changed. So the working tree is only read, and verify
# can run beside the tests and lint, which compile and read the same generated
# files (CI runs them side by side), and your own edits never fail it; only
# what the generators would change does. To bring such files up to date, run
# `make generate manifests` in the tree, review and commit.
#
# The copy is outside the repository (the architecture and docs checks walk
# the tree) at a path fixed per checkout: Go's build cache keys a package by
# its directory, so a second run compiles nothing again.
#
# Needs what `make generate manifests` needs: the Go toolchain and the Go
# module proxy (hack/capi/generate.sh downloads the pinned cluster-api
# provider modules there). Usage: hack/verify.sh [make]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
make="${1:-make}"

copy="${TMPDIR:-/tmp}/hcp-fleet-verify-$(id -u)/$(pwd -P | cksum | cut -d' ' -f1)"
rm -rf "${copy}"
mkdir -p "${copy}"

# Every file git would commit that exists now (a tracked file deleted in
# the tree is left out, as a commit would leave it out).
git ls-files -z --cached --others --exclude-standard |
  while IFS= read -r -d '' f; do
    if [[ -e "${f}" || -L "${f}" ]]; then printf '%s\0' "${f}"; fi
  done |
  tar --null --no-recursion -T - -cf - | tar -xf - -C "${copy}"

snapshot_git() { git -C "${copy}" -c user.name=verify -c user.email=verify@localhost "$@"; }
snapshot_git init -q
snapshot_git add -A
snapshot_git commit -q --no-verify -m "the tree as verify found it"

"${make}" --no-print-directory -C "${copy}" generate manifests

changed="$(snapshot_git status --porcelain --untracked-files=all)"
if [[ -n "${changed}" ]]; then
  echo
  echo "verify: the generators change these files (stale, edited by hand, or new and not committed):"
  echo "${changed}" | sed 's/^/  /'
  echo
  snapshot_git --no-pager diff --stat
  snapshot_git --no-pager diff | head -n 200
  echo
  echo "verify: run \`make generate manifests\`, review and commit (the generated tree is in ${copy})"
  exit 1
fi
rm -rf "${copy}"
echo "verify: generated files are up to date"
