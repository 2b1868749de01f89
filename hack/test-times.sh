#!/usr/bin/env bash
# Where a `make test` run spent its time, from its go test -json events
# (gotestsum --jsonfile): each package's test binary wall time (TestMain's
# fleet start-up included; "(cached)" results count as 0), then the
# top-level tests that took 30 s or more. `make test` prints it after the
# run and keeps it in bin/test-times.txt; TEST_FIRST in the Makefile lists
# the slowest packages so that they start first.
#
# Usage: hack/test-times.sh bin/test.json
set -euo pipefail
json="${1:?usage: $0 bin/test.json}"
[[ -s "${json}" ]] || { echo "test-times: no events in ${json}"; exit 0; }

# One event a line; the fields we need are plain strings and numbers, so
# awk's match() is enough (no jq on the CI image).
awk '
  function str(name) {
    if (!match($0, "\"" name "\":\"[^\"]*\"")) return ""
    return substr($0, RSTART + length(name) + 4, RLENGTH - length(name) - 5)
  }
  {
    action = str("Action")
    if ((action != "pass" && action != "fail") || !match($0, /"Elapsed":[0-9.]+/)) next
    elapsed = substr($0, RSTART + 10, RLENGTH - 10) + 0
    pkg = str("Package"); sub(/^github\.com\/hcp-fleet\/hcp-fleet\//, "", pkg)
    test = str("Test")
    if (test == "") printf "P %10.1f %s %s\n", elapsed, action, pkg
    else if (test !~ /\// && elapsed >= 30) printf "T %10.1f %s %s.%s\n", elapsed, action, pkg, test
  }
' "${json}" | sort -k2,2nr >"${json}.times"

echo
echo "test binaries by wall time (s), the sum and the slowest 20:"
awk '$1 == "P" { sum += $2; n++ } END { printf "  %d packages, %.0f s in all\n", n, sum }' "${json}.times"
awk '$1 == "P"' "${json}.times" | head -20 | cut -c3-
echo "top-level tests of 30 s or more (s):"
awk '$1 == "T"' "${json}.times" | cut -c3-
rm -f "${json}.times"
