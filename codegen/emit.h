#pragma once
// The emitter: a set of specializations -> files (one .cu and one .spec.json per kernel, plus
// manifest.json), and an all-or-nothing write into a directory.
#include <string>
#include <vector>

#include "codegen/kernel_spec.h"
#include "codegen/specialize.h"

namespace dash::codegen {

struct GeneratedFile {
  std::string name;  ///< file name inside the output directory
  std::string text;
};

/// Files in name order; byte-identical for equal inputs (no time stamps, no absolute paths).
/// UserError when two specs would share a file name or the template cannot be specialized.
std::vector<GeneratedFile> generate_files(std::vector<KernelSpec> const& specs,
                                          TemplateSource const& source);

/// Writes every file into a fresh temporary directory next to `dir`, then moves them into `dir`
/// (created if absent) and removes files an earlier manifest in `dir` listed that this set no
/// longer has. Nothing in `dir` changes if writing the temporary files fails.
void write_generated(std::string const& dir, std::vector<GeneratedFile> const& files);

}  // namespace dash::codegen
