#pragma once
// The kernel a generated policy plugs into: per kernel family, the header the generated file
// includes (once) and the registration it ends with. A family gets an entry once its kernel
// header takes a policy (runtime/schedule/protocol.cuh); until then codegen refuses it.
#include <string>

#include "runtime/kernels/family.h"

namespace dash::codegen {

struct KernelTarget {
  rt::KernelFamily family = rt::KernelFamily::kSm80;
  std::string header;     ///< include path from the source tree's root
  std::string registrar;  ///< class template instantiated on the policy; its constructor registers
};

/// The family's target. UserError for a family without a kernel header to generate for.
KernelTarget kernel_target(rt::KernelFamily family);

/// The generated file's last line: a static registrar of `policy` (a name in dash::rt).
std::string registration_line(KernelTarget const& target, std::string const& policy);

}  // namespace dash::codegen
