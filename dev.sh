#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine: installs dependencies,
# configures and builds, then does the job asked for.
#   ./dev.sh demo             build the freshd binary only (build packages
#                             only), then run freshd on its embedded default
#   ./dev.sh test             build everything, then run the whole test suite
#   ./dev.sh test --sanitize  the same with clang, ASan + UBSan and libFuzzer
#                             instrumentation (build-asan/, fuzzers in
#                             build-asan/fuzz/)
#   ./dev.sh build            build everything (tests and benchmarks too)
#   ./dev.sh build --sanitize build what `test --sanitize` runs
# Extra arguments after `demo` go to `freshd demo` (e.g. --seconds 30).
set -euo pipefail
cd "$(dirname "$0")"

job="${1:-}"
shift || true
build_dir=build
cmake_args=(-DCMAKE_BUILD_TYPE=Release -DFRESHD_TESTS=ON)
if [[ "$job" =~ ^(test|build)$ && "${1:-}" == "--sanitize" ]]; then
  shift
  build_dir=build-asan
  # One instrumented build serves the sanitized tests and the fuzzers.
  # -O1 and line tables only: sanitized tests run ~2x faster than at -O0
  # and stack traces keep their file:line.
  cmake_args=(-DCMAKE_BUILD_TYPE=Debug -DFRESHD_SANITIZE=ON -DFRESHD_FUZZ=ON
              -DFRESHD_BENCH=OFF -DFRESHD_TESTS=ON
              -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
              "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -gline-tables-only"
              "-DCMAKE_C_FLAGS_DEBUG=-O1 -gline-tables-only")
fi

case "$job" in
  demo)
    scripts/install-deps.sh --build
    cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DFRESHD_TESTS=OFF >/dev/null
    cmake --build "$build_dir" -j "$(nproc)" --target freshd
    exec "$build_dir/freshd" demo "$@"
    ;;
  test | build)
    scripts/install-deps.sh
    cmake -S . -B "$build_dir" -G Ninja "${cmake_args[@]}" >/dev/null
    cmake --build "$build_dir" -j "$(nproc)"
    if [[ "$job" == "test" ]]; then
      exec ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)"
    fi
    ;;
  *) echo "usage: ./dev.sh demo|test|build [--sanitize]" >&2; exit 2 ;;
esac
