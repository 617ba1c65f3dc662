#!/usr/bin/env bash
# Install Debian's bubblewrap, the sandbox of the grader's kernels and test runners (tools/grading/sandbox.py).
#
# Idempotent: does nothing when `bwrap` already starts a sandbox. Otherwise runs
# `apt-get update` then `apt-get install -y bubblewrap` (as root, or through sudo when
# available); without either it says what to ask the machine's administrator for.
set -euo pipefail

bwrap_works() {
    command -v bwrap >/dev/null 2>&1 && bwrap --ro-bind / / --unshare-all true >/dev/null 2>&1
}

if bwrap_works; then
    echo "bubblewrap present: $(bwrap --version)"
    exit 0
fi

if command -v bwrap >/dev/null 2>&1; then
    echo "error: bwrap is installed but cannot create a sandbox (user namespaces disabled?):" >&2
    bwrap --ro-bind / / --unshare-all true || true
    exit 1
fi

if [ "$(id -u)" -eq 0 ]; then
    SUDO=()
elif command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
else
    echo "error: installing bubblewrap needs root (or sudo): apt-get install -y bubblewrap" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update
"${SUDO[@]}" apt-get install -y --no-install-recommends bubblewrap

if ! bwrap_works; then
    echo "error: bwrap still cannot create a sandbox after apt-get install bubblewrap" >&2
    exit 1
fi
echo "bubblewrap installed: $(bwrap --version)"
