// The translation unit that builds the tests' precompiled header
// (tests/CMakeLists.txt: freshd_test_pch); it defines nothing.
