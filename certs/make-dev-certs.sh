#!/usr/bin/env bash
# Makes a private CA and a serving certificate for the webhook with openssl, in certs/dev/:
#   ca.crt   the CA (put its base64 into the webhook configurations' caBundle)
#   tls.crt  the serving certificate, SANs: localhost, 127.0.0.1 and the in-cluster Service names
#   tls.key  its private key
#   scheduler.crt, scheduler.key  a client certificate for kube-scheduler (CN system:kube-scheduler),
#            signed by the same CA: the extender takes calls only from its holder
#            (curl --cert certs/dev/scheduler.crt --key certs/dev/scheduler.key ...)
# Usage: certs/make-dev-certs.sh [--if-missing] [--out DIR] [--namespace NS] [--service NAME]
#   --if-missing  do nothing when DIR already holds a certificate that is still valid for a day
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$here/dev"
namespace="gpu-admission"
service="gpu-admission"
if_missing=false
while (($#)); do
  case "$1" in
    --if-missing) if_missing=true ;;
    --out) out="$2"; shift ;;
    --namespace) namespace="$2"; shift ;;
    --service) service="$2"; shift ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done

command -v openssl >/dev/null || { echo "openssl is needed (apt-get install openssl)" >&2; exit 2; }

if $if_missing && [[ -s "$out/tls.crt" && -s "$out/tls.key" && -s "$out/ca.crt" && -s "$out/scheduler.crt" && -s "$out/scheduler.key" ]] \
   && openssl x509 -checkend 86400 -noout -in "$out/tls.crt" >/dev/null 2>&1 \
   && openssl x509 -checkend 86400 -noout -in "$out/scheduler.crt" >/dev/null 2>&1; then
  exit 0
fi

mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 3650 \
  -subj "/CN=gpu-admission-dev-ca" \
  -addext "basicConstraints=critical,CA:TRUE" \
  -addext "keyUsage=critical,keyCertSign,cRLSign" \
  -keyout "$work/ca.key" -out "$work/ca.crt" 2>/dev/null

cat >"$work/ext.cnf" <<EXT
basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=DNS:localhost,IP:127.0.0.1,DNS:${service},DNS:${service}.${namespace},DNS:${service}.${namespace}.svc,DNS:${service}.${namespace}.svc.cluster.local
EXT

openssl req -newkey rsa:2048 -nodes -sha256 -subj "/CN=${service}.${namespace}.svc" \
  -keyout "$work/tls.key" -out "$work/tls.csr" 2>/dev/null
openssl x509 -req -sha256 -days 825 -in "$work/tls.csr" -CA "$work/ca.crt" -CAkey "$work/ca.key" \
  -CAcreateserial -extfile "$work/ext.cnf" -out "$work/tls.crt" 2>/dev/null

cat >"$work/client.cnf" <<EXT
basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth
EXT
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -sha256 -subj "/CN=system:kube-scheduler" \
  -keyout "$work/scheduler.key" -out "$work/scheduler.csr" 2>/dev/null
openssl x509 -req -sha256 -days 825 -in "$work/scheduler.csr" -CA "$work/ca.crt" -CAkey "$work/ca.key" \
  -CAcreateserial -extfile "$work/client.cnf" -out "$work/scheduler.crt" 2>/dev/null

# Write the key last and atomically so that a server reloading certificates never sees a pair
# that does not match.
install -m 0644 "$work/ca.crt" "$out/ca.crt"
install -m 0644 "$work/tls.crt" "$out/tls.crt.new" && mv "$out/tls.crt.new" "$out/tls.crt"
install -m 0600 "$work/tls.key" "$out/tls.key.new" && mv "$out/tls.key.new" "$out/tls.key"
install -m 0644 "$work/scheduler.crt" "$out/scheduler.crt"
install -m 0600 "$work/scheduler.key" "$out/scheduler.key"
echo "wrote $out/ca.crt, $out/tls.crt, $out/tls.key, $out/scheduler.crt, $out/scheduler.key (SANs: localhost, 127.0.0.1, ${service}, ${service}.${namespace}, ${service}.${namespace}.svc)"
