#!/usr/bin/env bash
# Run by `./mvnw package` once Quarkus has packed server/target/quarkus-app (pom.xml, execution
# aot-training): makes the AOT cache app.aot (JEP 483, 514, 515: classes loaded and linked, method
# profiles) from a training run, checks that the JVM accepts it, and writes the launcher `run`.
#   train.sh JAVA_HOME APP_DIR
# The training run is the packaged server itself with the production options (jvm.args), no
# cluster, the dev certificate, a free port: its warm-up pushes every endpoint's sample requests
# through in process and over HTTPS for longer than at a production start (health/WarmUp), then the
# server exits and the JVM writes the cache. A cache is only usable by the JVM build that made it.
set -euo pipefail
java_home="$1"
app="$2"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
java="$java_home/bin/java"

cp "$here/jvm.args" "$app/jvm.args"
sed "s|@JAVA_HOME@|$java_home|" "$here/run" >"$app/run"
chmod +x "$app/run"
rm -f "$app/app.aot"

log="$app/aot-training.log"
started=$(date +%s)
if ! (cd "$app" && MALLOC_ARENA_MAX=2 "$java" @jvm.args -XX:MaxRAM=1536m -XX:AOTCacheOutput=app.aot \
  -Dgpu-admission.warm-up.training=true -Dgpu-admission.cluster.enabled=false \
  -Dgpu-admission.tls.self-managed=false \
  -Dgpu-admission.tls.cert-file="$root/certs/dev/tls.crt" -Dgpu-admission.tls.key-file="$root/certs/dev/tls.key" \
  -Dquarkus.http.ssl-port=0 -jar quarkus-run.jar) >"$log" 2>&1; then
  echo "AOT training run failed (the server's output: $log):" >&2
  tail -30 "$log" >&2
  exit 1
fi
[[ -s "$app/app.aot" ]] || { echo "AOT training run wrote no app.aot (see $log)" >&2; exit 1; }
# A cache this JVM refuses fails here, not at the first start: -XX:AOTMode=on stops with "Unable to
# use AOT cache" instead of running without it.
(cd "$app" && "$java" @jvm.args -XX:AOTCache=app.aot -XX:AOTMode=on -cp quarkus-run.jar -version >/dev/null 2>>"$log") \
  || { echo "$java does not accept the app.aot it just made (see $log)" >&2; exit 1; }
echo "AOT cache $app/app.aot: $(($(stat -c %s "$app/app.aot") / 1048576)) MiB from a $(($(date +%s) - started)) s training run ($(grep -o 'warm-up finished in .*' "$log" || true))"
