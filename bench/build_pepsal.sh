#!/usr/bin/env bash
# Build PEPsal (Caini, Firrincieli, Lacamera; the TPROXY version) from a source checkout,
# for bench/live_pep.py --pepsal only: nothing in hetpath needs it.
#
#   bash bench/build_pepsal.sh SRC_DIR      # prints the path of the built binary
#
# SRC_DIR is a clone of PEPsal's public repository (danielinux/pepsal). Needs, as Debian
# packages: autoconf automake libtool pkg-config libnetfilter-queue-dev (which brings
# libnfnetlink-dev). The build stays in SRC_DIR; nothing is installed.
set -euo pipefail
src="${1:?usage: build_pepsal.sh SRC_DIR}"
cd "$src"
for tool in autoreconf make gcc; do
    command -v "$tool" >/dev/null || { echo "build_pepsal.sh: error: $tool not found (apt-get install autoconf automake libtool libnetfilter-queue-dev)" >&2; exit 1; }
done
if [ ! -x configure ]; then
    if [ -x autogen.sh ]; then ./autogen.sh >/dev/null; else autoreconf -fi >/dev/null; fi
fi
[ -f Makefile ] || ./configure >/dev/null
make -j"$(nproc)" >/dev/null
echo "$src/src/pepsal"
