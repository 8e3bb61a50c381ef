#pragma once
// Reading JSON that comes from users (schedule files, machine profiles): never trusted. A file is
// read whole up to a size limit; the parser caps the nesting depth and refuses a key repeated in
// one object (nlohmann's parser would let the last one win). Every failure is one UserError.
#include <cstdint>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dagsim/core/error.h"

namespace dash::sim {

/// `text` as JSON, objects at most `max_depth` levels deep. UserError "malformed JSON: ..." (or
/// "JSON nested deeper than ...") otherwise.
nlohmann::json parse_user_json(std::string const& text, int max_depth);

/// The whole of the regular file `path`, at most `max_bytes`; `what` names it in the errors
/// ("cannot read schedule 'x.json': no such file").
std::string read_user_file(std::string const& path, std::string const& what,
                           std::uintmax_t max_bytes);

/// `parse(text)` of the file at `path` (read as read_user_file reads it), its UserErrors prefixed
/// with the path ("x.json: malformed JSON: ...").
template <class Parse>
auto read_user_document(std::string const& path, std::string const& what, std::uintmax_t max_bytes, Parse&& parse) {
  std::string const text = read_user_file(path, what, max_bytes);
  try {
    return std::forward<Parse>(parse)(text);
  } catch (UserError const& e) {
    throw UserError(fmt::format("{}: {}", path, e.what()));
  }
}

/// `text` as a JSON string (invalid UTF-8 replaced), for error messages and documents.
std::string json_quoted(std::string const& text);

}  // namespace dash::sim
