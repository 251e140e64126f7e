#!/usr/bin/env bash
# gen-certs.sh OUTDIR - test PKI for TLS upstream tests: a throwaway CA and a
# server certificate for localhost and 127.0.0.1 signed by it.
# Writes OUTDIR/ca.pem, OUTDIR/ca.key, OUTDIR/server.pem, OUTDIR/server.key.
# Never use these anywhere but tests.
set -euo pipefail
out=${1:?usage: gen-certs.sh OUTDIR}
mkdir -p "$out"
cd "$out"
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 3650 \
  -subj "/CN=switchyard test CA" \
  -addext "basicConstraints=critical,CA:TRUE" \
  -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr \
  -subj "/CN=localhost" 2>/dev/null
cat > server.ext <<'EXT'
basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=DNS:localhost,IP:127.0.0.1
EXT
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
  -out server.pem -days 3650 -extfile server.ext 2>/dev/null
rm -f server.csr server.ext ca.srl
chmod 600 ca.key server.key
