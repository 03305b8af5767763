#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine: installs dependencies,
# configures and builds, then does the job asked for.
#   ./dev.sh demo             build, then run freshd on its embedded default
#   ./dev.sh test             build, then run the whole test suite (ctest)
#   ./dev.sh test --sanitize  the same with ASan + UBSan (build-asan/)
#   ./dev.sh build            build only
set -euo pipefail
cd "$(dirname "$0")"

job="${1:-}"
shift || true
build_dir=build
cmake_args=(-DCMAKE_BUILD_TYPE=Release)
if [[ "${1:-}" == "--sanitize" ]]; then
  build_dir=build-asan
  cmake_args=(-DCMAKE_BUILD_TYPE=Debug -DFRESHD_SANITIZE=ON -DFRESHD_BENCH=OFF)
fi

scripts/install-deps.sh
cmake -S . -B "$build_dir" -G Ninja "${cmake_args[@]}" >/dev/null
cmake --build "$build_dir" -j "$(nproc)"

case "$job" in
  demo) exec "$build_dir/freshd" demo ;;
  test) ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" ;;
  build) ;;
  *) echo "usage: ./dev.sh demo|test|build [--sanitize]" >&2; exit 2 ;;
esac
