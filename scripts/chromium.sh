#!/usr/bin/env bash
# Chromium for the browser tests (tests/browser), from Debian's packages.
#
#   scripts/chromium.sh        print the path of the chromium binary, installing it
#                              with apt-get first when it is missing
#
# Playwright drives this system Chromium (executable_path); no browser is downloaded
# (`playwright install` is never run). Like scripts/postgres.sh, it needs root to
# install; without root and without chromium it exits 1 and says so.
set -euo pipefail

find_chromium() {
  local name found
  for name in chromium chromium-browser; do
    if found=$(command -v "$name" 2>/dev/null); then
      echo "$found"
      return 0
    fi
  done
  return 1
}

if ! find_chromium >/dev/null; then
  echo "chromium.sh: Chromium not found; installing it with apt-get" >&2
  if [[ $(id -u) -ne 0 ]]; then
    echo "chromium.sh: need root to apt-get install chromium" >&2
    exit 1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >&2
fi
find_chromium
