# The GPU runtime. ON when nvcc is found: CI has nvcc but no GPU, so it compiles every CUDA source
# and the GPU tests skip at run time. Targets sm_80 (portable path) and sm_90a.
include(CheckLanguage)
check_language(CUDA)
if(CMAKE_CUDA_COMPILER)
  option(DASH_CUDA "Build the CUDA runtime" ON)
else()
  option(DASH_CUDA "Build the CUDA runtime" OFF)
endif()

if(DASH_CUDA)
  enable_language(CUDA)
  set(CMAKE_CUDA_STANDARD 20)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  # Static cudart: a binary built here runs on the GPU machine as it is.
  set(CMAKE_CUDA_RUNTIME_LIBRARY Static)
  set(DASH_CUDA_ARCHS "80;90a" CACHE STRING "CUDA architectures (sm_80 portable, sm_90a Hopper)")
  set(CMAKE_CUDA_ARCHITECTURES ${DASH_CUDA_ARCHS})
  find_package(CUDAToolkit REQUIRED)
  # Warnings as errors extends to ptxas serializing wgmma (cmake/cuda_guard.sh).
  if(DASH_WERROR)
    set(CMAKE_CUDA_COMPILER_LAUNCHER "${CMAKE_CURRENT_LIST_DIR}/cuda_guard.sh" ${CMAKE_CUDA_COMPILER_LAUNCHER})
  endif()
endif()
