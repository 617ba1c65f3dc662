#!/usr/bin/env bash
# Install Debian's Chromium for the browser test (tests/test_browser.py).
#
# Idempotent: does nothing when /usr/bin/chromium already starts. Otherwise runs
# `apt-get update` then `apt-get install -y chromium` (as root, or through sudo when
# available). Playwright drives this system browser; `playwright install` is never used.
set -euo pipefail

CHROMIUM=/usr/bin/chromium

chromium_works() {
    [ -x "$CHROMIUM" ] && "$CHROMIUM" --headless=new --no-sandbox --disable-gpu --version \
        >/dev/null 2>&1
}

if chromium_works; then
    echo "chromium already installed: $("$CHROMIUM" --version 2>/dev/null)"
    exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
    SUDO=()
elif command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
else
    echo "error: installing chromium needs root (or sudo); run: apt-get install -y chromium" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update
"${SUDO[@]}" apt-get install -y --no-install-recommends chromium fonts-liberation

if ! chromium_works; then
    echo "error: $CHROMIUM is still not usable after apt-get install chromium" >&2
    exit 1
fi
echo "chromium installed: $("$CHROMIUM" --version 2>/dev/null)"
