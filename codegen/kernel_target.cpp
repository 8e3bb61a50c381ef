#include "codegen/kernel_target.h"

#include <fmt/format.h>

#include "dagsim/core/error.h"

namespace dash::codegen {

KernelTarget kernel_target(rt::KernelFamily family) {
  switch (family) {
    case rt::KernelFamily::kSm80:
      return {family, "runtime/kernels/sm80/kernel.cuh", "dash::rt::sm80::Registrar"};
    case rt::KernelFamily::kSm90:
      return {family, "runtime/kernels/sm90/kernel.cuh", "dash::rt::sm90::Registrar"};
  }
  user_error(
      "no {0} kernel to generate for yet: the {0} kernel header (runtime/kernels/{0}/kernel.cuh) "
      "does not exist; use --kernel sm80",
      rt::family_name(family));
}

std::string registration_line(KernelTarget const& target, std::string const& policy) {
  return fmt::format("static {}<dash::rt::{}> const dash_registrar;\n", target.registrar, policy);
}

}  // namespace dash::codegen
