#!/usr/bin/env bash
# Installs, from Debian 12's archive, what freshd's build, tests or
# benchmarks need. Idempotent: when everything is present it changes nothing
# and takes well under a second. Needs root (or sudo) only when something is
# missing.
#   scripts/install-deps.sh --build   what building the freshd binary needs
#                                     (./dev.sh demo and ./dev.sh build)
#   scripts/install-deps.sh           the build, plus the test toolchain
#                                     (GoogleTest, clang, chromium, prometheus,
#                                     node, nginx, nats-server: ./dev.sh test)
#   scripts/install-deps.sh --bench   also what bench/ uses (wrk; wget2 and
#                                     libboost1.74-doc for bench/crawl/)
# nginx and nats-server are installed but never started as services: tests
# run their own on loopback ports as the current user.
set -euo pipefail

build_packages=(
  build-essential cmake ninja-build pkg-config git
  mold         # the linker (CMakeLists.txt: FRESHD_MOLD)
  ccache       # compiler cache (CMakeLists.txt: FRESHD_CCACHE)
  libcurl4-openssl-dev libxml2-dev libboost-dev libleveldb-dev libssl-dev
  libsnappy-dev libtoml11-dev nlohmann-json3-dev
  libcli11-dev libspdlog-dev libxxhash-dev zlib1g-dev libbrotli-dev libidn2-dev
  libpsl-dev publicsuffix libre2-dev
  libnats-dev  # nats.c (JetStream, key-value): cluster/
  libsystemd-dev  # sd_notify(3): daemon/sd_notify.h
  ca-certificates  # the system CA store freshd verifies TLS with
)
test_packages=(
  python3
  libgtest-dev libgmock-dev googletest
  nats-server  # started by the cluster tests on loopback, never as a service
  clang clang-format libclang-rt-14-dev  # CI's sanitizer + fuzz build, format check
  python3-doc  # a real HTML corpus for parse tests and benchmarks
  nginx-light  # HTTP/2 + TLS server for fetch tests (started by the test)
  openssl      # the CLI makes the fetch tests' throwaway CA
  man-db groff-base bsdextrautils  # man -l, groff, col: the man page test
  dpkg-dev                   # dpkg-shlibdeps for the .deb (cpack -G DEB)
  chromium     # headless, opens the status page in its test
  prometheus   # promtool checks /metrics in the operator test
)
bench_packages=(wrk
  wget2             # the reference crawler of bench/crawl/
  libboost1.74-doc  # bench/crawl/'s site: 3,805 HTML pages, 69 MB
)

packages=("${build_packages[@]}")
case "${1:-}" in
  --build) ;;
  "" | --test) packages+=("${test_packages[@]}") ;;
  --bench) packages+=("${test_packages[@]}" "${bench_packages[@]}") ;;
  *) echo "usage: scripts/install-deps.sh [--build|--test|--bench]" >&2; exit 2 ;;
esac
# warcio.js checks the WARC output (tests/warc_js, npm ci): Debian's nodejs
# and npm, unless a node and an npm are on PATH already (e.g. NodeSource's).
if [[ "${1:-}" != "--build" ]] && { ! command -v node >/dev/null || ! command -v npm >/dev/null; }; then
  packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "install-deps: installing ${missing[*]}" >&2
sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# Keep packages' maintainer scripts from starting services (nginx on :80).
policy=/usr/sbin/policy-rc.d
added_policy=""
if [[ ! -e $policy ]]; then
  printf '#!/bin/sh\nexit 101\n' | $sudo tee $policy >/dev/null
  $sudo chmod 755 $policy
  added_policy=1
fi
status=0
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
  status=$?
[[ -n $added_policy ]] && $sudo rm -f $policy
exit $status
