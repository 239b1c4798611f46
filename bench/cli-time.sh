#!/usr/bin/env bash
# Wall time and CPU time (user+sys) of the command line on a handful of manifests, the median of N
# runs, variants interleaved so that a neighbour's load hits all of them alike. Each row also
# gives its ratio to `--version` of the same variant (Quarkus' start and stop alone, no command).
#   bench/cli-time.sh [runs]      (default 7; needs server/target/quarkus-app from ./mvnw package)
# JDKS: the java executables to try (default: java on PATH, and the Temurin 25 at
# /usr/lib/jvm/temurin-25-jdk-amd64 when present); a JDK older than the jar's class files (release
# 25) cannot run it and is left out with a note on stderr. Per JDK: `java -jar` as is (plain), the
# bin/kubectl-gpu_admission wrapper without its class-data archive (wrapper-noarchive: C1 only,
# serial GC) and with it (wrapper: the archive written by one run before the measured ones).
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0 ;; esac
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
runs="${1:-7}"
jar="$root/server/target/quarkus-app/quarkus-run.jar"
[ -f "$jar" ] || { echo "no $jar: run ./mvnw -B -DskipTests package" >&2; exit 2; }
r="$root/server/src/test/resources"
explain=(explain -f "$r/workloads/pytorchjob-consistent.yaml" -f "$r/workloads/deployment-topology-recreate.yaml"
  -f "$r/mutation/pytorch-dist-nccl-worker/pod.yaml" -f "$r/mutation/cgpu-test-pod/pod.yaml"
  -f "$r/workloads/job-topology-completions.yaml" --cluster "$r/cluster/nodes.yaml")
place=(place --cluster "$r/cluster/nodes.yaml" --cluster "$r/extender/bound-pods.yaml" -f "$r/cli/cgpu-deployment.yaml"
  -f "$r/workloads/pytorchjob-consistent.yaml")
jdks="${JDKS:-$(command -v java) $( [ -x /usr/lib/jvm/temurin-25-jdk-amd64/bin/java ] && echo /usr/lib/jvm/temurin-25-jdk-amd64/bin/java)}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The Java release the jar was compiled for: class file major version - 44 (69 is Java 25).
app_jar=("$root"/target/quarkus-app/app/*.jar)
release=$(( $(unzip -p "${app_jar[0]}" io/gpuadmission/main/GpuAdmissionMain.class | od -An -j6 -N2 -tu1 | awk '{print $1 * 256 + $2}') - 44 ))

variants=()
for java in $jdks; do
  feature=$("$java" -XshowSettings:properties -version 2>&1 | awk -F' = ' '/java.specification.version/ {print $2}')
  if ((feature < release)); then
    echo "cli-time: $java is Java $feature; the jar needs Java $release: left out" >&2
    continue
  fi
  variants+=("jdk$feature plain|$java|plain")
  variants+=("jdk$feature wrapper-noarchive|$java|off")
  variants+=("jdk$feature wrapper|$java|on")
  # The archive the wrapper writes on a first run, before anything is measured.
  JAVA="$java" GPU_ADMISSION_CLI_CACHE=on GPU_ADMISSION_CACHE_DIR="$work/cache" "$root/bin/kubectl-gpu_admission" "${explain[@]}" >/dev/null 2>&1 || true
done
((${#variants[@]})) || { echo "cli-time: none of $jdks is Java $release or later" >&2; exit 2; }

# One sample, "<wall ms> <cpu ms>": the variant running the command line given.
sample() {
  local java="$1" how="$2"; shift 2
  local out="$work/time"
  if [ "$how" = plain ]; then
    /usr/bin/time -f "%e %U %S" -o "$out" "$java" -jar "$jar" "$@" >/dev/null 2>&1 || true
  else
    JAVA="$java" GPU_ADMISSION_CLI_CACHE="$how" GPU_ADMISSION_CACHE_DIR="$work/cache" \
      /usr/bin/time -f "%e %U %S" -o "$out" "$root/bin/kubectl-gpu_admission" "$@" >/dev/null 2>&1 || true
  fi
  # time writes "Command exited with non-zero status 1" first when a command refuses: the figures are the last line.
  tail -1 "$out" | awk '{printf "%d %d\n", $1 * 1000, ($2 + $3) * 1000}'
}

declare -A wall cpu
for ((i = 0; i < runs; i++)); do
  for v in "${variants[@]}"; do
    IFS='|' read -r name java how <<<"$v"
    for command in version explain place; do
      case $command in
        version) read -r w c < <(sample "$java" "$how" --version) ;;
        explain) read -r w c < <(sample "$java" "$how" "${explain[@]}") ;;
        place) read -r w c < <(sample "$java" "$how" "${place[@]}") ;;
      esac
      wall["$name/$command"]+="$w "
      cpu["$name/$command"]+="$c "
    done
  done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf '%-24s %-8s %9s %9s %14s %13s\n' variant command wall_ms cpu_ms wall/version cpu/version
for v in "${variants[@]}"; do
  name="${v%%|*}"
  bw=$(echo "${wall[$name/version]}" | median)
  bc=$(echo "${cpu[$name/version]}" | median)
  for command in version explain place; do
    w=$(echo "${wall[$name/$command]}" | median)
    c=$(echo "${cpu[$name/$command]}" | median)
    printf '%-24s %-8s %9d %9d %14.2f %13.2f\n' "$name" "$command" "$w" "$c" "$(echo "$w/$bw" | bc -l)" "$(echo "$c/$bc" | bc -l)"
  done
done
echo "runs=$runs loadavg=$(cut -d' ' -f1-3 /proc/loadavg) cpus=$(nproc)"
