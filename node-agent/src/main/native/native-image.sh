#!/usr/bin/env bash
# Run by `./mvnw -Pnative package` (node-agent/pom.xml, profile native) once target/node-agent/ is
# laid out: builds the node agent's native executable, target/node-agent-runner, from node-agent.jar
# and its lib/ with GraalVM's (or Mandrel's) native-image. The reflection, resources and class
# initialisation it needs are in the jars themselves (META-INF/native-image: the agent's own, and
# Netty's), so `native-image -jar node-agent.jar` is the whole build.
#   native-image.sh GRAALVM_HOME JAR OUTPUT
# GRAALVM_HOME: the server's property, -Dquarkus.native.graalvm-home=DIR, so one property builds
# both programs; unset (Maven passes the unresolved ${...}), the environment's GRAALVM_HOME, as
# Quarkus reads it.
set -euo pipefail
home="$1"
jar="$2"
out="$3"
[[ "$home" == '${'* || -z "$home" ]] && home="${GRAALVM_HOME:-}"
if [[ ! -x "$home/bin/native-image" ]]; then
  echo "node agent: no native-image in '${home}': give a GraalVM or Mandrel home as -Dquarkus.native.graalvm-home=DIR" \
    "(or GRAALVM_HOME); on the project's build machines ../shared/native-kit/setup.sh DEST makes one (DEST/graalvm-home)" >&2
  exit 1
fi
# Up to date (newer than the jar and every library it names): not built again, as Quarkus'
# quarkus.native.reuse-existing does for the server; a build takes minutes.
if [[ -x "$out" && "$out" -nt "$jar" ]] && [[ -z "$(find "$(dirname "$jar")/lib" -newer "$out" | head -1)" ]]; then
  echo "node agent: $out is up to date"
  exit 0
fi
cd "$(dirname "$out")"
# --install-exit-handlers: SIGTERM runs the shutdown hook (NodeAgentMain closes the plugin's socket),
# as the JVM does. -J-Xmx: the builder's heap; the agent's analysis needs about 2.5 GiB.
# -J--add-modules: the JDK modules beyond java.base that the agent uses (the API server's HTTP
# client, the health listener), in the builder's module graph: GraalVM's own driver resolves every
# system module for a class-path build, the native kit's stand-in driver only the builder's.
exec "$home/bin/native-image" -J-Xmx3g -J--add-modules=java.net.http,jdk.httpserver \
  --no-fallback --install-exit-handlers -H:+ReportExceptionStackTraces \
  -jar "$jar" -o "$(basename "$out")"
