#include "dagsim/core/json_input.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <vector>

#include "dagsim/core/error.h"

namespace dash::sim {
namespace {
// Keys quoted in errors are cut to this many bytes.
constexpr std::size_t kMaxKeyInError = 256;
}  // namespace

std::string json_quoted(std::string const& text) {
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json parse_user_json(std::string const& text, int max_depth) {
  using json = nlohmann::json;
  // nlohmann's parser keeps its own stack, but a depth cap still turns "[[[[...]]]]" into one
  // short error before it builds anything large. It also lets a repeated key overwrite the first
  // (two "launch" keys: the last wins), which a strict format refuses: the keys of each open
  // object are tracked here.
  std::vector<std::set<std::string>> open_objects;
  json::parser_callback_t const check = [&open_objects, max_depth](
                                            int depth, json::parse_event_t event, json& parsed) {
    if (depth > max_depth) user_error("JSON nested deeper than {} levels", max_depth);
    if (event == json::parse_event_t::object_start) {
      open_objects.emplace_back();
    } else if (event == json::parse_event_t::object_end) {
      if (!open_objects.empty()) open_objects.pop_back();
    } else if (event == json::parse_event_t::key && !open_objects.empty()) {
      std::string const& key = parsed.get_ref<std::string const&>();
      if (!open_objects.back().insert(key).second) {
        user_error("malformed JSON: duplicate key {} in one object",
                   json_quoted(key.substr(0, kMaxKeyInError)));
      }
    }
    return true;
  };
  try {
    return json::parse(text, check, true, false);
  } catch (json::exception const& e) {
    std::string message = e.what();
    // "[json.exception.parse_error.101] parse error at ..." -> "parse error at ..."
    if (auto const close = message.find("] ");
        message.rfind("[json.exception", 0) == 0 && close != std::string::npos) {
      message.erase(0, close + 2);
    }
    for (char& ch : message) {
      if (ch == '\n' || ch == '\r') ch = ' ';
    }
    user_error("malformed JSON: {}", message);
  }
}

std::string read_user_file(std::string const& path, std::string const& what,
                           std::uintmax_t max_bytes) {
  std::error_code ec;
  auto const status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    user_error("cannot read {} '{}': no such file", what, path);
  }
  if (!std::filesystem::is_regular_file(status)) {
    user_error("cannot read {} '{}': not a regular file", what, path);
  }
  auto const size = std::filesystem::file_size(path, ec);
  if (ec) user_error("cannot read {} '{}': {}", what, path, ec.message());
  if (size > max_bytes) {
    user_error("{} '{}' is {} bytes, more than the limit of {}", what, path, size, max_bytes);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) user_error("cannot read {} '{}': {}", what, path, std::strerror(errno));
  std::string text(static_cast<std::size_t>(size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
  if (in.gcount() != static_cast<std::streamsize>(size)) {
    user_error("cannot read {} '{}': short read", what, path);
  }
  return text;
}

}  // namespace dash::sim
