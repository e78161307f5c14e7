#!/usr/bin/env bash
# What the program strategy's sandbox needs from the OS (docs/security.md):
# bubblewrap (bwrap) for the namespaces and libseccomp for the seccomp filter.
#
#   scripts/sandbox.sh          install them with apt-get when missing, then check that
#                               bwrap can create the namespaces the sandbox uses
#
# Run by .ci/run before the tests, and by tests/conftest.py when bwrap is missing.
set -euo pipefail

missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
ldconfig -p 2>/dev/null | grep -q 'libseccomp\.so\.2' || missing+=(libseccomp2)
if ((${#missing[@]})); then
  echo "sandbox.sh: installing ${missing[*]} with apt-get" >&2
  if [[ $(id -u) -ne 0 ]]; then
    echo "sandbox.sh: need root to apt-get install ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 \
    || { apt-get update -qq >/dev/null && apt-get install -y -qq "${missing[@]}" >/dev/null; }
fi
# The namespaces the sandbox asks for: a user, PID, mount and network namespace.
if ! out=$(bwrap --unshare-all --unshare-user --uid 65534 --gid 65534 --die-with-parent \
    --ro-bind / / true 2>&1); then
  echo "sandbox.sh: bwrap cannot create namespaces here: $out" >&2
  exit 1
fi
echo "sandbox.sh: bwrap $(bwrap --version | awk '{print $2}') can confine the sandbox" >&2
