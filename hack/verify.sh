#!/usr/bin/env bash
# `make verify`: reruns every generator (`make generate manifests`: deepcopy,
# apply configurations, our CRDs, docs/api.md, manifests/hypershift, the OCM
# CRDs the local fleet installs, the CAPI and Agent-provider CRDs and types,
# the OLM bundle) and fails when that changes the tree: a generated file that
# is stale, edited by hand, or new and not committed.
#
# On a clean clone (CI) this is `git diff --exit-code` plus "no untracked
# files". In a working tree with edits it compares the tree before and after
# the generators, so your own uncommitted edits do not fail it; only what the
# generators changed does (and they have then brought those files up to date:
# review and commit them).
#
# Needs what `make generate manifests` needs: the Go toolchain and the Go
# module proxy (hack/capi/generate.sh downloads the pinned cluster-api
# provider modules there). Usage: hack/verify.sh [make]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
make="${1:-make}"

# snapshot: one line per file that differs from HEAD or is untracked (not
# ignored): its content hash, or "deleted".
snapshot() {
  { git diff HEAD --name-only --no-renames; git ls-files --others --exclude-standard; } | sort -u |
    while IFS= read -r f; do
      if [[ -e "${f}" ]]; then
        echo "$(sha256sum < "${f}" | cut -c1-64) ${f}"
      else
        echo "deleted ${f}"
      fi
    done
}

before="$(snapshot)"
if [[ -n "${before}" ]]; then
  echo "verify: the tree has uncommitted changes; checking only what the generators change"
fi
"${make}" --no-print-directory generate manifests
after="$(snapshot)"

if [[ "${before}" != "${after}" ]]; then
  echo
  echo "verify: the generators changed these files (stale, edited by hand, or new):"
  { diff <(echo "${before}") <(echo "${after}") || true; } | sed -n 's/^[<>] [^ ]* /  /p' | sort -u
  if [[ -z "${before}" ]]; then
    echo
    git --no-pager diff --stat
    git status --porcelain --untracked-files=all
  fi
  echo "verify: the generators have rewritten them: review and commit (make generate manifests)"
  exit 1
fi
echo "verify: generated files are up to date"
