#!/usr/bin/env bash
# Installs promtool, and the Prometheus server that test/integration/prometheus.test.ts starts,
# from Debian's `prometheus` package when either is missing. The package's maintainer scripts
# would start a Prometheus server on :9090 (init.d or systemd) — something CI must not leave
# running — so services are held back with policy-rc.d during the install.
# (Without that hold, the package's init script starts the daemon without a pidfile, fails its
# own check, and leaves dpkg half-configured with a server that nothing stops.)
# Idempotent: when both are present it exits at once, silently, so `npm test`'s pretest can run it
# on every run.
set -euo pipefail

# A promtool from elsewhere (a tarball, another package) is not enough: the test needs the server.
if command -v promtool >/dev/null 2>&1 && { command -v prometheus >/dev/null 2>&1 || [ -x /usr/bin/prometheus ]; }; then
  exit 0
fi

APT_CALLER=install-promtool
# shellcheck source=../scripts/apt.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/apt.sh"

# Debian's policy hook: invoke-rc.d and deb-systemd-invoke start no service while it exits 101
# ("action forbidden"). Put one in place for the install unless the machine's own (Docker images
# ship one) already forbids it, and put back whatever was there afterwards.
policy=/usr/sbin/policy-rc.d
if ! { [ -x "$policy" ] && { "$policy" prometheus start >/dev/null 2>&1; [ $? -eq 101 ]; }; }; then
  saved=""
  if [ -e "$policy" ]; then
    saved="$(mktemp)"
    as_root cp -p "$policy" "$saved"
  fi
  restore_policy() {
    if [ -n "$saved" ]; then as_root cp -p "$saved" "$policy" && rm -f "$saved"; else as_root rm -f "$policy"; fi
  }
  trap restore_policy EXIT
  printf '#!/bin/sh\nexit 101\n' | as_root tee "$policy" >/dev/null
  as_root chmod 755 "$policy"
fi

# A fresh machine may have no package lists yet: update once, then try again.
apt_install prometheus || { apt_update && apt_install prometheus; }

# Under systemd the package also enables the unit for the next boot: undo that.
if [ -d /run/systemd/system ]; then
  as_root systemctl disable --now prometheus.service >/dev/null 2>&1 || true
fi

promtool --version 2>&1 | head -n 1
