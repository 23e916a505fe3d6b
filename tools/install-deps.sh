#!/usr/bin/env bash
# Installs the system packages Cask needs when they are missing (Debian/Ubuntu): liblz4-dev and
# libssl-dev (AES-GCM for encryption at rest) to build, python3-lz4 (or pip's lz4) and cryptography for the independent format reader
# tools/caskdump.py, strace,
# and fiu-utils (fiu-run) for the fault suite tools/fault_suite.py.
set -euo pipefail
SUDO=""
if [ "$(id -u)" != "0" ] && command -v sudo >/dev/null; then SUDO="sudo"; fi
need=()
pkg-config --exists liblz4 2>/dev/null || need+=(liblz4-dev pkg-config)
pkg-config --exists libcrypto 2>/dev/null || need+=(libssl-dev pkg-config)
command -v strace >/dev/null || need+=(strace)
command -v fiu-run >/dev/null || need+=(fiu-utils)
# redis-server (and redis-cli): the shared tier's tests run against a real Redis on loopback.
command -v redis-server >/dev/null || need+=(redis-server)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get install -y "${need[@]}" >/dev/null 2>&1 || { $SUDO apt-get update >/dev/null && $SUDO apt-get install -y "${need[@]}" >/dev/null; }
fi
if ! python3 -c 'import lz4.block' 2>/dev/null; then
  python3 -m pip install --quiet lz4 2>/dev/null || $SUDO apt-get install -y python3-lz4 >/dev/null 2>&1 || echo "warning: python lz4 not installed; caskdump cross-check will be skipped"
fi
# cryptography (AES-GCM): caskdump.py opens the sealed values of an encrypted store with it.
if ! python3 -c 'from cryptography.hazmat.primitives.ciphers.aead import AESGCM' 2>/dev/null; then
  python3 -m pip install --quiet cryptography 2>/dev/null || $SUDO apt-get install -y python3-cryptography >/dev/null 2>&1 || { $SUDO apt-get update >/dev/null && $SUDO apt-get install -y python3-cryptography >/dev/null; }
fi
