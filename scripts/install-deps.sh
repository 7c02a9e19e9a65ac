#!/usr/bin/env bash
# Installs what Loom needs on Debian 12: the packages in scripts/debian-packages.txt (apt-get
# update only when one is missing) and the pinned test-only Python packages in a
# project-local virtualenv (.venv). Safe to run again: it skips what is present.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

missing=()
while read -r pkg; do
  [ -z "$pkg" ] && continue
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' scripts/debian-packages.txt)

if [ "${#missing[@]}" -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${missing[@]}"
fi

# Test-only Python packages, pinned, in .venv; rebuilt when the requirements change.
venv=.venv
stamp="$venv/.requirements-installed"
if [ ! -f "$stamp" ] || ! cmp -s python/requirements-test.txt "$stamp"; then
  echo "deps: preparing $venv (python/requirements-test.txt)"
  /usr/bin/python3 -m venv --system-site-packages "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r python/requirements-test.txt
  cp python/requirements-test.txt "$stamp"
fi
