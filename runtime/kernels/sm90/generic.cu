// The Hopper family's generic kernel: the table-driven schedule policy, so any validated schedule
// runs (docs/schedule-protocol.md).
#include "runtime/kernels/sm90/kernel.cuh"
#include "runtime/schedule/table_policy.cuh"

namespace dash::rt::sm90 {
namespace {

Registrar<TablePolicy> const registrar;

}  // namespace
}  // namespace dash::rt::sm90
