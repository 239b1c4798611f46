#!/usr/bin/env bash
# The `docker` that Jib calls (quarkus.jib.docker-executable-name) when the image goes to a file
# rather than a daemon: Quarkus' Jib extension builds either to a registry or to a Docker daemon,
# and hands the daemon the image as `docker save`'s tar on the standard input of `docker load`.
# This writes that tar to $GPU_ADMISSION_IMAGE_TAR instead (quarkus.jib.docker-environment), which
# `ctr image import`, `docker load`, `podman load` and `skopeo copy docker-archive:` all read. Jib
# also asks `docker info` for the daemon's platform: the machine's.
set -euo pipefail
case "${1:-}" in
  load)
    out="${GPU_ADMISSION_IMAGE_TAR:?docker-to-tar.sh: GPU_ADMISSION_IMAGE_TAR names no file}"
    mkdir -p "$(dirname "$out")"
    cat >"$out.part"
    mv "$out.part" "$out"
    echo "Loaded image to $out"
    ;;
  info)
    case "$(uname -m)" in
      aarch64 | arm64) arch=aarch64 ;;
      *) arch="$(uname -m)" ;;
    esac
    printf '{"OSType":"linux","Architecture":"%s"}\n' "$arch"
    ;;
  *)
    echo "docker-to-tar.sh writes an image tar; it has no docker $*" >&2
    exit 1
    ;;
esac
