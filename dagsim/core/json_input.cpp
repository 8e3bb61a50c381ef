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

namespace {

/// Builds the document from the parser's events (as nlohmann's own DOM builder does), refusing
/// nesting deeper than the cap and a key repeated in one object. (nlohmann's parser callback would
/// do the same checks, but its builder then scans the enclosing container at every object's end:
/// quadratic in a trace's hundreds of thousands of events.)
class StrictBuilder : public nlohmann::json_sax<nlohmann::json> {
 public:
  using json = nlohmann::json;
  explicit StrictBuilder(int max_depth) : max_depth_(max_depth) {}

  bool null() override { return add(nullptr) != nullptr; }
  bool boolean(bool v) override { return add(v) != nullptr; }
  bool number_integer(number_integer_t v) override { return add(v) != nullptr; }
  bool number_unsigned(number_unsigned_t v) override { return add(v) != nullptr; }
  bool number_float(number_float_t v, string_t const&) override { return add(v) != nullptr; }
  bool string(string_t& v) override { return add(std::move(v)) != nullptr; }
  bool binary(binary_t& v) override { return add(json::binary(std::move(v))) != nullptr; }
  bool start_object(std::size_t) override {
    open_.push_back(add(json::object()));
    keys_.emplace_back();
    return true;
  }
  bool key(string_t& k) override {
    check_depth();
    if (!keys_.back().insert(k).second) {
      user_error("malformed JSON: duplicate key {} in one object", json_quoted(k.substr(0, kMaxKeyInError)));
    }
    key_ = std::move(k);
    return true;
  }
  bool end_object() override {
    open_.pop_back();
    keys_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override {
    open_.push_back(add(json::array()));
    return true;
  }
  bool end_array() override {
    open_.pop_back();
    return true;
  }
  bool parse_error(std::size_t, std::string const&, nlohmann::detail::exception const& e) override {
    error_ = e.what();
    return false;
  }

  json& root() { return root_; }
  [[nodiscard]] std::string const& error() const { return error_; }

 private:
  void check_depth() const {
    if (static_cast<int>(open_.size()) > max_depth_) user_error("JSON nested deeper than {} levels", max_depth_);
  }
  /// The value into the open container (or as the root); the address of where it now lives. An
  /// array only grows while none of its elements is open, so the open containers' addresses hold.
  template <class Value>
  json* add(Value&& v) {
    check_depth();
    if (open_.empty()) {
      root_ = json(std::forward<Value>(v));
      return &root_;
    }
    json& top = *open_.back();
    if (top.is_array()) {
      top.emplace_back(std::forward<Value>(v));
      return &top.back();
    }
    json& slot = top[key_];
    slot = json(std::forward<Value>(v));
    return &slot;
  }

  int max_depth_;
  json root_;
  std::vector<json*> open_;
  std::vector<std::set<std::string>> keys_;
  std::string key_;
  std::string error_;
};

}  // namespace

nlohmann::json parse_user_json(std::string const& text, int max_depth) {
  using json = nlohmann::json;
  StrictBuilder builder(max_depth);
  if (json::sax_parse(text, &builder, json::input_format_t::json, true, false)) return std::move(builder.root());
  std::string message = builder.error();
  // "[json.exception.parse_error.101] parse error at ..." -> "parse error at ..."
  if (auto const close = message.find("] "); message.rfind("[json.exception", 0) == 0 && close != std::string::npos) {
    message.erase(0, close + 2);
  }
  for (char& ch : message) {
    if (ch == '\n' || ch == '\r') ch = ' ';
  }
  user_error("malformed JSON: {}", message);
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
