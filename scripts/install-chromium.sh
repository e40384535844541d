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

APT_CALLER=install-chromium
# shellcheck source=apt.sh
. "$(dirname "${BASH_SOURCE[0]}")/apt.sh"

# Lists first: the browser moves with security updates, and stale lists name versions that are
# gone from the mirror (a 404 mid-install).
apt_update
apt_install chromium

"$CHROMIUM" --version 2>&1 | head -n 1
