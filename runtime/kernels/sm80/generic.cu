// The generic sm80 kernel: the portable kernel with the table-driven policy, so that it runs any
// validated schedule. Registered as the family's fallback (schedule hash 0, any mask); generated
// specializations (generated/*.cu) take precedence where their schedule hash matches.
#include "runtime/kernels/sm80/kernel.cuh"
#include "runtime/schedule/table_policy.cuh"

namespace dash::rt::sm80 {
namespace {

Registrar<TablePolicy> const registrar;

}  // namespace
}  // namespace dash::rt::sm80
