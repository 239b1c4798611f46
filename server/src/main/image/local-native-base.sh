#!/usr/bin/env bash
# Makes the native image's base where no registry is reachable (local-base.sh's counterpart for
# -Pnative -Dimage): a Debian rootfs from Debian's packages (glibc, zlib, sh: what an executable of
# Mandrel or GraalVM links), written as a `docker save` tar, which Jib takes as a base (`tar://`).
# Prints the tar's path; the image build takes it as
#   ./mvnw -B -Pnative package -Dimage -Dquarkus.native.graalvm-home=HOME \
#     -Dimage.native-base=tar://$(server/src/main/image/local-native-base.sh HOME)
# When HOME is a native kit's (../shared/native-kit/setup.sh), whose executables load the JDK's
# shared libraries and a stand-in libjvm from HOME by absolute path, a second layer carries those
# libraries at that same path: such an image runs on this machine's containerd for the container
# check, and is never one to ship (docs/install.md, "Native executables").
# Cached with local-base.sh's (the same Debian layer). Needs root and debootstrap.
#   local-native-base.sh GRAALVM_HOME
# GPU_ADMISSION_BASE_CACHE: the cache directory (default /var/cache/gpu-admission-base).
# GPU_ADMISSION_DEBIAN_MIRROR: where debootstrap fetches packages (default deb.debian.org).
set -euo pipefail
home="$(cd "${1:?local-native-base.sh GRAALVM_HOME: the home the native executables were built with}" && pwd)"
cache="${GPU_ADMISSION_BASE_CACHE:-/var/cache/gpu-admission-base}"
mirror="${GPU_ADMISSION_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
suite=bookworm

kit_libs=()
if [[ -f "$home/lib/svm/jvmstub/libjvm.so" ]]; then
  kit_libs=("$home/lib/svm/jvmstub/libjvm.so" "$home"/lib/*.so)
  name="native-kit-$(printf '%s' "$home" | sha256sum | cut -c1-12)-$suite"
else
  name="native-$suite"
fi
out="$cache/$name.tar"
# A kit's libraries change when setup.sh runs again: the cached tar must be newer than them.
if [[ -s "$out" ]] && { ((${#kit_libs[@]} == 0)) || [[ -z "$(find "${kit_libs[@]}" -newer "$out" | head -1)" ]]; }; then
  echo "$out"
  exit 0
fi
command -v debootstrap >/dev/null || { echo "local-native-base.sh: needs debootstrap (apt-get install debootstrap)" >&2; exit 1; }
mkdir -p "$cache"
work="$(mktemp -d "$cache/.work.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# The Debian layer, local-base.sh's: minbase (glibc, dash, coreutils, zlib).
debian="$cache/debian-$suite-minbase.tar"
if [[ ! -s "$debian" ]]; then
  started=$(date +%s)
  debootstrap --variant=minbase "$suite" "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 \
    || { tail -20 "$work/debootstrap.log" >&2; exit 1; }
  rm -rf "$work/rootfs/var/cache/apt/archives/"*.deb "$work/rootfs/var/lib/apt/lists/"* "$work/rootfs/dev/"*
  tar --numeric-owner --sort=name -C "$work/rootfs" -cf "$debian.part" .
  mv "$debian.part" "$debian"
  echo "local-native-base.sh: Debian $suite minbase in $(($(date +%s) - started)) s" >&2
fi

# docker save's layout: manifest.json, the config, the layers (uncompressed; their sha256 is the diff_id).
mkdir -p "$work/image"
cp "$debian" "$work/image/debian.tar"
layers='"debian.tar"'
diff_ids="\"sha256:$(sha256sum "$work/image/debian.tar" | cut -d' ' -f1)\""
history="{\"created_by\":\"debootstrap --variant=minbase $suite\"}"
if ((${#kit_libs[@]})); then
  for lib in "${kit_libs[@]}"; do
    mkdir -p "$work/kit$(dirname "$lib")"
    cp -a "$lib" "$work/kit$lib"
  done
  tar --numeric-owner --owner=0 --group=0 --sort=name -C "$work/kit" -cf "$work/image/kit.tar" .
  layers="$layers,\"kit.tar\""
  diff_ids="$diff_ids,\"sha256:$(sha256sum "$work/image/kit.tar" | cut -d' ' -f1)\""
  history="$history,{\"created_by\":\"the native kit's JDK libraries and stand-in libjvm at $home/lib (not to ship)\"}"
fi
cat >"$work/image/config.json" <<JSON
{"architecture":"amd64","os":"linux",
 "config":{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","LANG=C.UTF-8"],"Cmd":["sh"]},
 "rootfs":{"type":"layers","diff_ids":[$diff_ids]},
 "history":[$history]}
JSON
cat >"$work/image/manifest.json" <<JSON
[{"Config":"config.json","RepoTags":["gpu-admission/base:$name"],"Layers":[$layers]}]
JSON
(cd "$work/image" && tar -cf "$out.part" -- *.json *.tar)
mv "$out.part" "$out"
echo "$out"
