#pragma once
// The C ABI of the dash_attn Python package: plain C types only, so that Python loads it with
// ctypes and no libtorch or Python headers are needed to build it (python/README.md says why).
//
// Every function returns a status (DASH_ATTN_OK, or the kind of error) and never lets a C++
// exception out; the message of the last error on the calling thread is dash_attn_last_error().
// Problems and schedules cross the boundary as JSON text: a problem is
//   {"batch", "q_heads", "kv_heads", "seqlen_q", "seqlen_k", "head_dim",
//    "mask": "full" | "causal" | "window:L,R", "seqlens_q": [...], "seqlens_k": [...]}
// (the lengths lists only under varlen) plus "family": "sm80" | "sm90", which fixes the tiles
// (docs/design.md, "Kernel families"). Schedules are schedule documents (docs/schedule-format.md).
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
  DASH_ATTN_OK = 0,
  DASH_ATTN_USER_ERROR = 1,  ///< bad input (dash::UserError): a ValueError in Python
  DASH_ATTN_CUDA_ERROR = 2,  ///< a failed CUDA call (dash::rt::CudaError)
  DASH_ATTN_NO_CUDA = 3,     ///< the library was built without the CUDA runtime
  DASH_ATTN_INTERNAL = 4,    ///< any other exception
};

/// Bumped on every change of a signature or struct below; the Python side refuses a mismatch.
int dash_attn_abi_version(void);
/// 1 when the CUDA runtime (the kernels) is built in, 0 for a schedule-only build.
int dash_attn_has_cuda(void);
/// The last error's message on this thread ("" after a success).
char const* dash_attn_last_error(void);
/// Frees text returned through a char** out-parameter.
void dash_attn_free(char* text);
/// The ticket wait that stopped a deterministic backward (docs/design.md, "Never a hang"): CTA, dQ
/// or dK/dV tile, the rank it waited for and what the ticket read; "" while none expired. For a
/// caller whose own synchronization (PyTorch's) reported the CUDA error. *out: dash_attn_free.
int dash_attn_expired_ticket_wait(char** out);

/// Comma-separated names of the named strategies (docs/strategies.md). *out: dash_attn_free.
int dash_attn_strategy_names(char** out);
/// Makes a schedule. spec: {"problem": {...}, "family", "machine": {"name", "sms"}, "strategy":
/// "search" | "fastest-named" (the named strategy with the smallest simulated makespan) | a
/// strategy name, "model": "default" | "paper", "evaluations", "budget_ms",
/// "threads"}. *out: {"document": <schedule document>, "makespan", "lower_bound",
/// "local_evaluations"}, validated against the machine.
int dash_attn_make_schedule(char const* spec, char** out);
/// Checks that a schedule document is for the problem of spec (same shape and tiles) and valid on
/// its own machine; USER_ERROR with the reason otherwise. *out: {"sms", "strategy", "makespan"}.
int dash_attn_check_schedule(char const* spec, char const* document, char** out);

/// One (batch, seqlen, heads, head_dim) tensor, strides in elements; varlen: (total, heads,
/// head_dim) with batch_stride unused.
typedef struct {
  void* data;
  int64_t batch_stride;
  int64_t row_stride;
  int64_t head_stride;
} DashAttnTensor;

typedef struct {
  DashAttnTensor q, k, v, o, dout, dq, dk, dv;
  float* lse;  ///< [q_heads][total_q] fp32
} DashAttnTensors;

/// The GPU's name, SM count and compute capability. name: a buffer of name_len bytes.
int dash_attn_device_info(int device, char* name, int name_len, int* sms, int* cc_major,
                          int* cc_minor);
/// The kernel families built in that run on the device, fastest first ("sm90,sm80"). *out: free.
int dash_attn_runnable_families(int device, char** out);

/// An attention object (runtime/attention.h) on `device`: problem as in the header comment, dtype
/// 0 bf16 / 1 fp16. Allocates the backward workspace there.
int dash_attn_create(char const* problem, int dtype, float softmax_scale, int device, void** handle);
void dash_attn_destroy(void* handle);
/// Validates the schedule document against the object's problem and the device and uploads it.
/// family: "sm80" | "sm90" | "" (the fastest that runs); generic != 0: the table-driven kernel
/// even when a specialization matches. *kernel_name: the kernel picked (dash_attn_free).
int dash_attn_set_schedule(void* handle, char const* document, char const* family, int generic,
                           char** kernel_name);
/// Enqueue on `stream` (a cudaStream_t as an integer; 0 the legacy default stream).
int dash_attn_forward(void* handle, DashAttnTensors const* tensors, uintptr_t stream);
int dash_attn_backward(void* handle, DashAttnTensors const* tensors, int deterministic,
                       uintptr_t stream);

#ifdef __cplusplus
}
#endif
