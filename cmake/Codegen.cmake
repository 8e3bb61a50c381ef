# Code generation links Clang 22 libTooling (Debian clang-22, libclang-22-dev, llvm-22-dev).
set(DASH_LLVM_ROOT /usr/lib/llvm-22 CACHE PATH "LLVM 22 install prefix")
if(EXISTS ${DASH_LLVM_ROOT}/lib/cmake/clang/ClangConfig.cmake)
  option(DASH_CODEGEN "Build the libTooling code generator" ON)
else()
  option(DASH_CODEGEN "Build the libTooling code generator" OFF)
endif()

if(DASH_CODEGEN)
  find_package(LLVM REQUIRED CONFIG PATHS ${DASH_LLVM_ROOT}/lib/cmake/llvm NO_DEFAULT_PATH)
  find_package(Clang REQUIRED CONFIG PATHS ${DASH_LLVM_ROOT}/lib/cmake/clang NO_DEFAULT_PATH)
endif()
