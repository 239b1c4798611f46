# Sourced by bench scripts that run one class of src/test/java/io/gpuadmission/bench on the packaged
# jar's classes: `. "$(dirname "${BASH_SOURCE[0]}")/lib/bench-class.sh"`, then
# `run_bench_class io.gpuadmission.bench.SomeClass "$@"`. It builds the jar and the test classes,
# writes the test class path to target/bench-classpath.txt and runs the class on JDK 25, the
# agent's INFO and DEBUG lines left out.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
# JDK 25, as the build (.mvn/jdk25.sh): the jar's classes need it, and the agent runs on the bench's JVM.
. "$root/.mvn/jdk25.sh"

run_bench_class() {
  local class="$1"
  shift
  ./mvnw -B -q -DskipTests package
  ./mvnw -B -q -DskipTests test-compile dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=target/bench-classpath.txt
  "$JAVA_HOME/bin/java" -cp "target/test-classes:target/classes:$(cat target/bench-classpath.txt)" \
    -Djava.util.logging.manager=org.jboss.logmanager.LogManager \
    "$class" "$@" 2>&1 | grep -v " INFO \| DEBUG "
}
