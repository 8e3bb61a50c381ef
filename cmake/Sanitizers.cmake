# Host sanitizers: AddressSanitizer and UndefinedBehaviorSanitizer on every C++ target (the CPU
# tests run under them in CI, scripts/test.sh). Host code only: CUDA translation units are not
# instrumented, so the option requires DASH_CUDA=OFF.
option(DASH_SANITIZE "Build host code with ASan and UBSan" OFF)
if(DASH_SANITIZE)
  if(DASH_CUDA)
    message(FATAL_ERROR "DASH_SANITIZE instruments host code only: configure with -DDASH_CUDA=OFF")
  endif()
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined>
                      $<$<COMPILE_LANGUAGE:CXX>:-fno-sanitize-recover=all>
                      $<$<COMPILE_LANGUAGE:CXX>:-fno-omit-frame-pointer>)
  add_link_options(-fsanitize=address,undefined)
endif()

# libFuzzer targets (tests/fuzz): clang only, on top of the sanitizers; every library gets the
# fuzzer's coverage instrumentation.
option(DASH_FUZZ "Build the libFuzzer targets (clang, with DASH_SANITIZE)" OFF)
if(DASH_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang" OR NOT DASH_SANITIZE)
    message(FATAL_ERROR "DASH_FUZZ needs clang (CMAKE_CXX_COMPILER=clang++-22) and DASH_SANITIZE=ON")
  endif()
  # -Wno-deprecated-declarations: Debian 12's libstdc++ (GCC 12) calls its own deprecated
  # get_temporary_buffer inside std::stable_sort, which clang 22 reports at our call sites.
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link>
                      $<$<COMPILE_LANGUAGE:CXX>:-Wno-deprecated-declarations>)
endif()
