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
