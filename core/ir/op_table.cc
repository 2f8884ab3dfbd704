#include "core/ir/op_table.h"

#include <cmath>
#include <sstream>
#include <type_traits>

#include "core/base/diagnostics.h"
#include "core/ir/scalar_math.h"

namespace fuserc {
namespace {

// Instantiates a generic reference lambda for each compute type.
template <class L>
ReferenceFns make_ref() {
  if constexpr (std::is_same_v<L, std::nullptr_t>) {
    return {};
  } else {
    ReferenceFns r;
    r.f32 = [](const float* a) -> float { return static_cast<float>(L{}(a)); };
    r.f64 = [](const double* a) -> double { return static_cast<double>(L{}(a)); };
    r.i64 = [](const int64_t* a) -> int64_t { return static_cast<int64_t>(L{}(a)); };
    r.b8 = [](const bool* a) -> bool { return static_cast<bool>(L{}(a)); };
    return r;
  }
}

std::vector<OpAttrSpec> parse_attr_spec(const char* spec) {
  std::vector<OpAttrSpec> out;
  std::istringstream in(spec);
  std::string word;
  while (in >> word) {
    bool optional = word.back() == '?';
    if (optional) word.pop_back();
    out.push_back({word, !optional});
  }
  return out;
}

std::vector<OpInfo> build_table() {
  std::vector<OpInfo> t;
#define FUSERC_OP(kind, name, group, min_args, max_args, results, rule, attrs, cuda, ...) \
  t.push_back(OpInfo{OpKind::kind, name, OpGroup::group, min_args, max_args, results,     \
                     DtypeRule::rule, parse_attr_spec(attrs), cuda,                       \
                     make_ref<decltype(__VA_ARGS__)>()});
#include "core/ir/ops.def"
#undef FUSERC_OP
  for (size_t i = 0; i < t.size(); ++i)
    FUSERC_CHECK(static_cast<size_t>(t[i].kind) == i, "op table out of order");
  return t;
}

}  // namespace

const std::vector<OpInfo>& all_ops() {
  static const std::vector<OpInfo> table = build_table();
  return table;
}

const OpInfo& op_info(OpKind kind) {
  const auto& t = all_ops();
  auto i = static_cast<size_t>(kind);
  FUSERC_CHECK(i < t.size(), "bad op kind " + std::to_string(i));
  return t[i];
}

const char* op_name(OpKind kind) {
  return op_info(kind).name;
}

std::optional<OpKind> op_by_name(std::string_view name) {
  for (const auto& info : all_ops())
    if (!info.is_internal() && name == info.name) return info.kind;
  return std::nullopt;
}

}  // namespace fuserc
