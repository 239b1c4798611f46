# Sourced by bench scripts that run one class of node-agent/src/test/java/io/gpuadmission/bench on
# the packaged agent (node-agent/target/node-agent/node-agent.jar):
# `. "$(dirname "${BASH_SOURCE[0]}")/lib/bench-class.sh"`, then
# `run_bench_class io.gpuadmission.bench.SomeClass "$@"`. It builds the programs and the test
# classes, writes the agent's test class path to node-agent/target/bench-classpath.txt and runs the
# class on JDK 25 from node-agent/ (where its tests run), the agent's INFO and DEBUG lines left out.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
# JDK 25, as the build (.mvn/jdk25.sh): the jar's classes need it, and the agent runs on the bench's JVM.
. "$root/.mvn/jdk25.sh"

run_bench_class() {
  local class="$1"
  shift
  ./mvnw -B -q -DskipTests package
  # Relative: each module of the reactor writes its own (an absolute path would leave the last one's).
  ./mvnw -B -q -DskipTests test-compile dependency:build-classpath -pl node-agent -am -Dmdep.includeScope=test \
    -Dmdep.outputFile=target/bench-classpath.txt
  (cd node-agent && "$JAVA_HOME/bin/java" -cp "target/test-classes:target/classes:$(cat target/bench-classpath.txt)" \
    -Djava.util.logging.manager=org.jboss.logmanager.LogManager -Dpackaged.jar="$root/node-agent/target/node-agent/node-agent.jar" \
    "$class" "$@") 2>&1 | grep -v " INFO \| DEBUG "
}
