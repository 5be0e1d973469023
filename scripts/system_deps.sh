#!/usr/bin/env bash
# Debian packages, installed when missing.
#   system_deps.sh run   bubblewrap for the sandbox; without root, warn and go on
#                        (grading then runs in degraded mode, see README)
#   system_deps.sh test  also docker-compose (compose-file check), chromium
#                        (browser tests), wrk (page benchmark) and nginx (the
#                        deadline drill's proxy); required
set -euo pipefail

mode=${1:-test}
if [ "$mode" = run ]; then
  packages=(bubblewrap)
else
  packages=(bubblewrap docker-compose chromium wrk nginx-light)
fi
missing=()
for pkg in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$pkg")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
  echo "system-deps: missing Debian packages: ${missing[*]} (as root: apt-get install ${missing[*]})" >&2
  [ "$mode" = run ] && exit 0
  exit 1
fi
echo "system-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
