# Every dependency comes from a Debian package installed by scripts/setup.sh. Nothing is fetched.
find_package(fmt REQUIRED)
find_package(CLI11 REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(Catch2 REQUIRED)
include(Catch)

option(DASH_PERF "Build perf/: the simulator's and the search's speed (Google Benchmark)" ON)
if(DASH_PERF)
  find_package(benchmark REQUIRED)
endif()

# Header-only fmt everywhere: binaries built here also run on the GPU machine, which has no libfmt.
add_library(dash_deps INTERFACE)
target_link_libraries(dash_deps INTERFACE fmt::fmt-header-only nlohmann_json::nlohmann_json)
