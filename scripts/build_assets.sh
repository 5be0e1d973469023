#!/usr/bin/env bash
# Build the front-end assets into static/vendor/ (gitignored) from the npm
# packages pinned in package-lock.json. The registry is used only here, at
# setup; the site serves the results itself and never loads a CDN.
#   scripts/build_assets.sh          npm ci (when needed) + bundle + copy
# Without node/npm it warns and exits 0: the pages still work (plain textarea,
# no charts), they are only less comfortable.
set -euo pipefail
cd "$(dirname "$0")/.."

vendor=static/vendor
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
  echo "build-assets: node/npm not found; pages fall back to a plain textarea" >&2
  echo "build-assets: (as root: apt-get install nodejs npm)" >&2
  exit 0
fi

# Exactly the versions in package-lock.json (the Makefile reruns this script
# only when the lock or the editor source is newer than its stamp).
npm ci --no-audit --no-fund --loglevel=error

mkdir -p "$vendor"
node_modules/.bin/esbuild static/js/editor.js \
  --bundle --minify --format=iife --target=es2020 \
  --legal-comments=eof --log-level=warning \
  --outfile="$vendor/editor.js"
cp node_modules/chart.js/dist/chart.umd.js "$vendor/chart.umd.js"
# chart.umd.js names its source map: collectstatic's manifest storage fails
# on a reference to a file that is not there, so the map comes along.
cp node_modules/chart.js/dist/chart.umd.js.map "$vendor/chart.umd.js.map"
cp node_modules/htmx.org/dist/htmx.min.js "$vendor/htmx.min.js"
echo "build-assets: $(ls "$vendor" | tr '\n' ' ')"
