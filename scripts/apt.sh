# Sourced by the install scripts (scripts/install-chromium.sh, grafana/install-promtool.sh):
# `as_root` runs a command as root (directly, or through passwordless sudo) and fails the caller
# with a line naming it otherwise; `apt_update` and `apt_install PACKAGE` wait for apt's lock.
# A fresh machine often runs apt itself (unattended upgrades at boot, another install): without
# a lock wait apt-get fails at once with "Could not get lock" instead of queueing behind it.
# Set APT_CALLER (the script's name, for the error line) before sourcing.

if [ "$(id -u)" -eq 0 ]; then
  as_root() { "$@"; }
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  as_root() { sudo -n "$@"; }
else
  echo "${APT_CALLER:-install}: need root or passwordless sudo to apt-get install" >&2
  exit 1
fi

APT_LOCK_TIMEOUT_SECONDS=300

apt_update() {
  as_root apt-get update -q -o "DPkg::Lock::Timeout=$APT_LOCK_TIMEOUT_SECONDS" >/dev/null
}

apt_install() {
  as_root env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q --no-install-recommends -o "DPkg::Lock::Timeout=$APT_LOCK_TIMEOUT_SECONDS" \
    "$@" >/dev/null
}
