# Sourced (POSIX sh) by ./mvnw, .ci/run and bench/*.sh: gpu-admission builds and runs on JDK 25.
# The build trains the AOT cache (server/target/quarkus-app/app.aot) with the JVM that runs Maven, and only
# that JVM build accepts the cache. Exports JAVA_HOME of a JDK 25 or later: JAVA_HOME itself, the JDK
# of `java` on the PATH, or one installed in the usual places; says what to install when none is.

jdk25_feature() { # $1 = a JDK home; prints its feature version (17, 25, ...) or nothing
  if [ -f "$1/release" ]; then
    sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$1/release"
  elif [ -x "$1/bin/java" ]; then
    "$1/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.specification\.version = \([0-9]*\).*/\1/p'
  fi
}

jdk25_usable() { # $1 = a JDK home: a javac beside a java, feature version 25 or later
  [ -n "$1" ] && [ -x "$1/bin/java" ] && [ -x "$1/bin/javac" ] || return 1
  v="$(jdk25_feature "$1")"
  [ -n "$v" ] && [ "$v" -ge 25 ]
}

jdk25_find() {
  if [ -n "${JAVA_HOME-}" ] && jdk25_usable "$JAVA_HOME"; then
    printf %s\\n "$JAVA_HOME"
    return 0
  fi
  on_path="$(command -v java 2>/dev/null || true)"
  if [ -n "$on_path" ]; then
    on_path="$(dirname "$(dirname "$(readlink -f "$on_path" 2>/dev/null || printf %s "$on_path")")")"
  fi
  # Where Temurin's tarball and packages, Debian/Ubuntu, the official images, SDKMAN and macOS put
  # JDKs. mvnw runs with globbing off (set -f): on for these patterns only.
  case $- in *f*) set +f; jdk25_noglob=1 ;; *) jdk25_noglob= ;; esac
  for home in "$on_path" /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/temurin-25-jdk-arm64 \
    /usr/lib/jvm/temurin-25* /usr/lib/jvm/java-25-* /usr/lib/jvm/jdk-25* /opt/java/openjdk \
    "${HOME-}"/.sdkman/candidates/java/25* /Library/Java/JavaVirtualMachines/*25*/Contents/Home; do
    if jdk25_usable "$home"; then
      [ -z "$jdk25_noglob" ] || set -f
      printf %s\\n "$home"
      return 0
    fi
  done
  [ -z "$jdk25_noglob" ] || set -f
  return 1
}

if jdk25_home="$(jdk25_find)"; then
  if [ "${JAVA_HOME-}" != "$jdk25_home" ] && [ -n "${JAVA_HOME-}" ]; then
    echo "gpu-admission: JAVA_HOME is JDK $(jdk25_feature "$JAVA_HOME"); using the JDK 25 at $jdk25_home" >&2
  fi
  JAVA_HOME="$jdk25_home"
  export JAVA_HOME
else
  cat >&2 <<'EOF'
gpu-admission needs a JDK 25 (it builds and runs on Java 25 and trains its AOT cache with it).
None was found in JAVA_HOME, on the PATH or under /usr/lib/jvm. Install one, then run again:
  Eclipse Temurin 25 (the JDK the container image runs): https://adoptium.net/temurin/releases/?version=25
  (tarball into /usr/lib/jvm/temurin-25-jdk-amd64, or Adoptium's apt repository: apt-get install temurin-25-jdk),
  or any JDK 25 with JAVA_HOME pointing at it.
EOF
  exit 1
fi
