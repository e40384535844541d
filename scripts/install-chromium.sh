#!/usr/bin/env bash
# Installs Chromium from Debian's `chromium` package when /usr/bin/chromium is missing:
# test/integration/explorer-browser.test.ts drives it headless with playwright-core, which ships
# no browser of its own. The package starts no service, so unlike grafana/install-promtool.sh
# nothing needs holding back.
# Idempotent: when Chromium is present it exits at once, silently, so `npm test`'s pretest can run
# it on every run.
set -euo pipefail

CHROMIUM=/usr/bin/chromium
if [ -x "$CHROMIUM" ]; then
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  as_root() { "$@"; }
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  as_root() { sudo -n "$@"; }
else
  echo "install-chromium: need root or passwordless sudo to apt-get install chromium" >&2
  exit 1
fi

# A fresh machine often runs apt itself (unattended upgrades at boot, another install): without
# a lock wait apt-get fails at once with "Could not get lock" instead of queueing behind it.
# Lists first: the browser moves with security updates, and stale lists name versions that are
# gone from the mirror (a 404 mid-install).
APT_LOCK_TIMEOUT_SECONDS=300
as_root apt-get update -q -o "DPkg::Lock::Timeout=$APT_LOCK_TIMEOUT_SECONDS" >/dev/null
as_root env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -q --no-install-recommends -o "DPkg::Lock::Timeout=$APT_LOCK_TIMEOUT_SECONDS" \
  chromium >/dev/null

"$CHROMIUM" --version 2>&1 | head -n 1
