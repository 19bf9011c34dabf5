#!/usr/bin/env bash
# Usage: scripts/sync-chart-files.sh
#
# Copies the Prometheus rule files (deploy/prometheus/*-rules.yaml, the files people edit) into the
# chart (deploy/helm/gpubot/files/prometheus/), whose PrometheusRule renders their groups: a chart
# cannot read files outside its own directory. tests/deploy/test_chart_files.py fails until the two
# agree byte for byte; run this after editing a rule file.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=deploy/helm/gpubot/files/prometheus
mkdir -p "$dest"
# A copy whose source is gone would keep rendering rules nobody edits.
for copy in "$dest"/*-rules.yaml; do
    if [ -e "$copy" ] && [ ! -e "deploy/prometheus/$(basename "$copy")" ]; then rm -v "$copy"; fi
done
cp -v deploy/prometheus/*-rules.yaml "$dest/"
