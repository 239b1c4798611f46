#!/usr/bin/env bash
# Makes the image's base where no registry is reachable: an equivalent of eclipse-temurin:25 (a
# Debian rootfs from Debian's packages, and this machine's Temurin 25 JDK at /opt/java/openjdk,
# JAVA_HOME and PATH as in the Temurin images), written as a `docker save` tar, which Jib takes as
# a base (`tar://`). The JDK must be the build that trains app.aot, so it is the one Maven runs on.
# Prints the tar's path; the image build takes it as
#   ./mvnw -B package -Dimage -Dimage.base=tar://$(server/src/main/image/local-base.sh)
# Cached: a second run with the same JDK prints the same tar at once. Needs root and debootstrap.
#   local-base.sh [JAVA_HOME]     (default: what .mvn/jdk25.sh finds)
# GPU_ADMISSION_BASE_CACHE: the cache directory (default /var/cache/gpu-admission-base).
# GPU_ADMISSION_DEBIAN_MIRROR: where debootstrap fetches packages (default deb.debian.org).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." && pwd)"
if [[ -n "${1:-}" ]]; then
  java_home="$1"
else
  # shellcheck source=/dev/null
  . "$root/.mvn/jdk25.sh" >&2
  java_home="$JAVA_HOME"
fi
cache="${GPU_ADMISSION_BASE_CACHE:-/var/cache/gpu-admission-base}"
mirror="${GPU_ADMISSION_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
suite=bookworm

version="$(sed -n 's/^JAVA_RUNTIME_VERSION="\(.*\)"/\1/p' "$java_home/release")"
[[ -n "$version" ]] || { echo "local-base.sh: $java_home/release names no JAVA_RUNTIME_VERSION" >&2; exit 1; }
name="temurin-${version//+/_}-$suite"   # a tag: no "+"
out="$cache/$name.tar"
if [[ -s "$out" ]]; then
  echo "$out"
  exit 0
fi
command -v debootstrap >/dev/null || { echo "local-base.sh: needs debootstrap (apt-get install debootstrap)" >&2; exit 1; }
mkdir -p "$cache"
work="$(mktemp -d "$cache/.work.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# The Debian layer: minbase (glibc, dash, coreutils), cached apart from the JDK so that a new JDK
# build reuses it.
debian="$cache/debian-$suite-minbase.tar"
if [[ ! -s "$debian" ]]; then
  started=$(date +%s)
  debootstrap --variant=minbase "$suite" "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 \
    || { tail -20 "$work/debootstrap.log" >&2; exit 1; }
  rm -rf "$work/rootfs/var/cache/apt/archives/"*.deb "$work/rootfs/var/lib/apt/lists/"* "$work/rootfs/dev/"*
  tar --numeric-owner --sort=name -C "$work/rootfs" -cf "$debian.part" .
  mv "$debian.part" "$debian"
  echo "local-base.sh: Debian $suite minbase in $(($(date +%s) - started)) s" >&2
fi

# The JDK layer, where the Temurin images have it.
mkdir -p "$work/jdk/opt/java"
cp -a "$java_home" "$work/jdk/opt/java/openjdk"
tar --numeric-owner --owner=0 --group=0 --sort=name -C "$work/jdk" -cf "$work/jdk.tar" .

# docker save's layout: manifest.json, the config, the layers (uncompressed; their sha256 is the diff_id).
mkdir -p "$work/image"
cp "$debian" "$work/image/debian.tar"
mv "$work/jdk.tar" "$work/image/jdk.tar"
debian_id="sha256:$(sha256sum "$work/image/debian.tar" | cut -d' ' -f1)"
jdk_id="sha256:$(sha256sum "$work/image/jdk.tar" | cut -d' ' -f1)"
cat >"$work/image/config.json" <<EOF
{"architecture":"amd64","os":"linux",
 "config":{"Env":["PATH=/opt/java/openjdk/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
   "JAVA_HOME=/opt/java/openjdk","JAVA_VERSION=jdk-$version","LANG=C.UTF-8"],"Cmd":["jshell"]},
 "rootfs":{"type":"layers","diff_ids":["$debian_id","$jdk_id"]},
 "history":[{"created_by":"debootstrap --variant=minbase $suite"},{"created_by":"cp -a $java_home /opt/java/openjdk"}]}
EOF
cat >"$work/image/manifest.json" <<EOF
[{"Config":"config.json","RepoTags":["gpu-admission/base:$name"],"Layers":["debian.tar","jdk.tar"]}]
EOF
tar -C "$work/image" -cf "$out.part" manifest.json config.json debian.tar jdk.tar
mv "$out.part" "$out"
echo "$out"
