#!/usr/bin/env bash
# Builds one Go command with visible progress, for `make run` on a fresh machine:
# a line every few module downloads and every hundred compiled packages, instead
# of a silent ten-minute pause. Errors are printed as they come.
#
# Usage: hack/build-progress.sh <package> <output binary>
set -euo pipefail
pkg="$1" out="$2"
go="${GO:-go}"

start=$SECONDS
echo ">> Go modules for ${pkg} (the first run downloads ~3.5 GiB, about 10 minutes)" >&2
# -x prints one "# get <url>" line per download; anything else is an error.
"${go}" mod download -x 2>&1 | awk '
  /^# get .*\.zip$/ { n++; if (n % 25 == 0) { printf(">> downloaded %d modules\n", n) > "/dev/stderr"; fflush() } ; next }
  /^# get / { next }
  /^(mkdir|cd|unzip|rm|cp|chmod) / { next }
  { print > "/dev/stderr" }
  END { if (n > 0) printf(">> downloaded %d modules\n", n) > "/dev/stderr" }'

echo ">> compiling ${pkg} (the first build takes several minutes)" >&2
# -v prints each package as it is compiled (nothing when the build cache has it).
"${go}" build -v -o "${out}" "${pkg}" 2>&1 | awk '
  /^[A-Za-z0-9_.~\/-]+$/ { n++; if (n % 100 == 0) { printf(">> compiled %d packages\n", n) > "/dev/stderr"; fflush() } ; next }
  { print > "/dev/stderr" }
  END { if (n > 0) printf(">> compiled %d packages\n", n) > "/dev/stderr" }'
echo ">> ${out} ready in $((SECONDS - start))s" >&2
