// Helpers shared by the unit tests: graphs from inline JSON, small tensors from values.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/base/diagnostics.h"
#include "core/base/host_tensor.h"
#include "core/base/json_reader.h"
#include "core/frontend/graph_parser.h"

namespace fuserc::testing {

inline Fusion parse_text(const std::string& json) {
  return parse_fusion(read_json(json, "t.json"));
}

// The UserError message a graph produces, or "<accepted>".
inline std::string parse_error(const std::string& json) {
  try {
    parse_text(json);
  } catch (const UserError& e) {
    return e.what();
  }
  return "<accepted>";
}

// The message of the UserError (or UsageError) `f` throws, or "<no error>" (anything else, an
// internal error included, propagates and fails the test).
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "<no error>";
}

template <class T>
HostTensor tensor(DType dtype, std::vector<int64_t> shape, const std::vector<T>& values) {
  HostTensor t(dtype, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i) t.store<T>(static_cast<int64_t>(i), values[i]);
  return t;
}

inline std::vector<double> as_doubles(const HostTensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.load_f64(i));
  return v;
}

inline std::vector<int64_t> as_ints(const HostTensor& t) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.load_i64(i));
  return v;
}

}  // namespace fuserc::testing
