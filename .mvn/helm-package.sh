#!/usr/bin/env bash
# `./mvnw package` step: packages charts/gpu-admission as server/target/helm/gpu-admission-VERSION.tgz, with
# the chart's version and appVersion set to the project's (so the chart runs the image this build
# makes). Helm comes from .mvn/helm.sh. Without it (no npm registry reachable, first build offline)
# the step says so and skips, unless GPU_ADMISSION_REQUIRE_HELM=true (.ci/run) makes that an error.
# Usage: .mvn/helm-package.sh VERSION OUTPUT_DIR
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
version="$1"
out="$2"
if ! helm="$(.mvn/helm.sh)"; then
  if [ "${GPU_ADMISSION_REQUIRE_HELM:-}" = true ]; then
    echo "helm-package: no Helm client (.mvn/helm.sh failed)" >&2
    exit 1
  fi
  echo "helm-package: skipped, no Helm client (.mvn/helm.sh failed); the chart is not packaged" >&2
  exit 0
fi
mkdir -p "$out"
"$helm" lint --strict charts/gpu-admission --namespace gpu-admission
"$helm" package charts/gpu-admission --version "$version" --app-version "$version" --destination "$out"
