#pragma once
// DASH_HOST_DEVICE: functions that device code and host code (tests, the CLI) both call.
#if defined(__CUDACC__)
#define DASH_HOST_DEVICE __host__ __device__
#else
#define DASH_HOST_DEVICE
#endif
