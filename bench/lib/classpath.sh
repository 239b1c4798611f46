# Sourced by the bench scripts that run the server module's test classes (the trace simulator, the
# quota replay, JMH, the mock clusters of the load scripts): `. "$root/bench/lib/classpath.sh"`, then
# `cp="$(server_test_classpath)"`. One reactor build compiles the three modules' main and test
# classes and lists the server's test class path, so it works on a fresh clone with an empty
# target/: the sibling modules resolve to their target/classes within the build (a
# dependency:build-classpath without a phase cannot resolve them, since nothing is installed).
# Each module writes its own target/bench-classpath.txt; the server's is the one read.
# BENCH_NO_BUILD=1 skips the build when a caller has just made it (bench/trace-table.sh's parallel
# runs); the class path must then exist.
server_test_classpath() {
  local listed="$root/server/target/bench-classpath.txt"
  if [[ "${BENCH_NO_BUILD:-0}" != 1 ]]; then
    (cd "$root" && ./mvnw -B -q -DskipTests test-compile dependency:build-classpath -pl server -am \
      -Dmdep.includeScope=test -Dmdep.outputFile=target/bench-classpath.txt) >&2
  fi
  [[ -s "$listed" ]] || { echo "no $listed: run without BENCH_NO_BUILD=1 once" >&2; return 1; }
  printf '%s' "$root/server/target/test-classes:$root/server/target/classes:$(cat "$listed")"
}
