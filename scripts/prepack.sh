#!/usr/bin/env bash
# npm pack / npm publish (and an install from a git URL, which packs the clone): dist/ is the
# package, and it is built here from these sources — bootstrapping what is missing — so a tarball
# never ships without it or with a stale one. If it cannot be built, packing fails and says why.
set -uo pipefail
exec 1>&2  # npm pack --json writes its JSON to stdout: the build speaks on stderr
cd "$(dirname "$0")/.."
if ! bash scripts/bootstrap.sh || ! bash scripts/build.sh wasm; then
  echo "prepack: dist/ (the npm package) could not be built, so nothing was packed." >&2
  echo "prepack: what is missing is listed above; scripts/bootstrap.sh installs it on Debian 12 (as root)." >&2
  exit 1
fi
for f in posenc.mjs posenc.wasm posenc-threads.mjs posenc-threads.wasm node.js browser.js posenc.d.ts; do
  [ -s "dist/$f" ] || { echo "prepack: the build left no dist/$f; nothing was packed." >&2; exit 1; }
done
