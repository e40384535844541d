#!/usr/bin/env bash
# Checks the alert rules (syntax, then the unit tests of payments.rules.test.yml), the Prometheus
# config of compose.yaml (with the rules it loads), and that every dashboard query parses as
# PromQL. Needs promtool: grafana/install-promtool.sh installs it.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v promtool >/dev/null 2>&1; then
  echo "check-alerts: promtool not found; run grafana/install-promtool.sh (Debian's prometheus)" >&2
  exit 1
fi

promtool check rules grafana/alerts/payments.rules.yml
promtool test rules grafana/alerts/payments.rules.test.yml
promtool check config grafana/prometheus.yml

queries="$(mktemp --suffix=.rules.yml)"
trap 'rm -f "$queries"' EXIT
npx --no-install tsx grafana/dashboard-queries.ts >"$queries"
echo "Dashboard queries:"
promtool check rules "$queries"
