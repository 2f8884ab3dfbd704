// Reading a constant input's `data`: values written inline (nested JSON lists, or one flat
// list, in row-major order; "inf", "-inf", "nan" allowed), or a tensor of a safetensors file
// beside the graph, mapped rather than read (weights of gigabytes cost nothing until used).
#include <cmath>
#include <filesystem>
#include <limits>

#include "core/base/diagnostics.h"
#include "core/base/host_tensor.h"
#include "core/base/safetensors.h"
#include "core/base/text_util.h"
#include "core/frontend/graph_reader.h"

namespace fuserc {

void GraphReader::read_constant(const Json& in, const std::string& p, Value& v) {
  const std::string pd = p + ".data";
  if (in.contains("strides"))
    fail(p + ".strides", "constant " + quote(v.name) +
                             " has strides; a constant is dense and row-major (no strides)");
  if (in.contains("symbol")) fail(p + ".symbol", "a constant cannot set a symbol");
  const Json& data = in["data"];
  if (data.is_object()) {
    v.constant = read_file_data(data, pd, v);
  } else {
    v.constant = ConstantData::from_bytes(read_inline_data(data, pd, v), "inline");
  }
}

// Inline data is either flat (a list of the numel values) or nested as the shape is: a list of
// shape[0] lists of shape[1] ... of numbers. Anything else (a ragged nesting, lists as deep as
// the shape with the wrong lengths) is refused naming the first list that does not fit.
void GraphReader::check_nesting(const Json& data, const std::string& pd, const Value& v) const {
  bool flat = true;
  for (const auto& e : data) flat = flat && !e.is_array();
  if (flat) return;
  struct Item {
    const Json* j;
    std::string path;
    size_t depth;
  };
  std::vector<Item> stack = {{&data, pd, 0}};
  const size_t rank = static_cast<size_t>(v.rank());
  while (!stack.empty()) {
    Item it = stack.back();
    stack.pop_back();
    if (it.depth == rank) {
      if (it.j->is_array())
        fail(it.path, "constant " + quote(v.name) + " nests its data deeper than its shape " +
                          shape_to_string(v.shape) + ": a number was expected here");
      continue;
    }
    const int64_t extent = v.shape[it.depth].value();
    if (!it.j->is_array() || static_cast<int64_t>(it.j->size()) != extent)
      fail(it.path, "constant " + quote(v.name) + " of shape " + shape_to_string(v.shape) +
                        " nests its data as no shape does: a list of " + std::to_string(extent) +
                        " was expected here (write the values flat, or nested as the shape is)");
    for (size_t i = it.j->size(); i-- > 0;)
      stack.push_back({&(*it.j)[i], json_path_index(it.path, i), it.depth + 1});
  }
}

std::string GraphReader::read_inline_data(const Json& data, const std::string& pd,
                                          const Value& v) const {
  if (!data.is_array() && v.rank() == 0 &&
      (data.is_number() || data.is_string() || data.is_boolean())) {
    const Json list = Json::array({data});  // a rank-0 constant written as its one number
    return read_inline_data(list, pd, v);
  }
  if (!data.is_array())
    fail(pd, "the data of constant " + quote(v.name) +
                 " must be a list of numbers (nested lists in row-major order) or "
                 "{\"file\": F, \"tensor\": T}, got " +
                 data.dump(-1, ' ', true).substr(0, 40));
  check_nesting(data, pd, v);
  const int64_t numel = v.numel().value();
  // The values in order, without recursion (JSON nesting is bounded by the reader anyway).
  // A value's path (for messages) is its list's path and its index there.
  struct Item {
    const Json* j;
    int list;  // index into `lists`
    size_t index;
  };
  std::vector<std::string> lists = {pd};
  std::vector<Item> leaves;
  std::vector<Item> stack;
  for (size_t i = data.size(); i-- > 0;) stack.push_back({&data[i], 0, i});
  while (!stack.empty() && static_cast<int64_t>(leaves.size()) <= numel) {
    Item it = stack.back();
    stack.pop_back();
    if (!it.j->is_array()) {
      leaves.push_back(it);
      continue;
    }
    lists.push_back(json_path_index(lists[it.list], it.index));
    int id = static_cast<int>(lists.size()) - 1;
    for (size_t i = it.j->size(); i-- > 0;) stack.push_back({&(*it.j)[i], id, i});
  }
  if (static_cast<int64_t>(leaves.size()) != numel) {
    std::string got = static_cast<int64_t>(leaves.size()) > numel
                          ? "more than " + std::to_string(numel) + " values"
                          : count_of(static_cast<int64_t>(leaves.size()), "value", "values");
    fail(pd, "constant " + quote(v.name) + " has " + got + " but its shape " +
                 shape_to_string(v.shape) + " holds " + std::to_string(numel));
  }
  HostTensor t(v.dtype, std::vector<int64_t>(1, numel));
  for (int64_t i = 0; i < numel; ++i) {
    const Json* j = leaves[i].j;
    auto where = [&] { return json_path_index(lists[leaves[i].list], leaves[i].index); };
    Literal l = j->is_number_integer() ? Literal::of_int(j->get<int64_t>())
                : j->is_number_float() ? Literal::of_float(j->get<double>())
                                       : read_number(*j, where(), "a value of constant " +
                                                                    quote(v.name));
    switch (v.dtype) {
      case DType::Bool:
        if (l.kind == Literal::Kind::Float)
          fail(where(), "constant " + quote(v.name) + " is bool: its values are true/false or 0/1");
        if (l.kind == Literal::Kind::Int && l.i != 0 && l.i != 1)
          fail(where(), "constant " + quote(v.name) + " is bool: " + l.str() + " is not 0 or 1");
        t.store_bool(i, l.as_bool());
        break;
      case DType::I32:
      case DType::I64: {
        if (l.kind == Literal::Kind::Float)
          fail(where(), "constant " + quote(v.name) + " is " + dtype_name(v.dtype) + ": " + l.str() +
                         " is not an integer");
        int64_t x = l.as_int();
        if (v.dtype == DType::I32 &&
            (x < std::numeric_limits<int32_t>::min() || x > std::numeric_limits<int32_t>::max()))
          fail(where(), "constant " + quote(v.name) + " is i32: " + l.str() + " is out of its range");
        t.store_i64(i, x);
        break;
      }
      default: t.store_f64(i, l.as_double()); break;  // rounded to the dtype, to nearest even
    }
  }
  return std::string(reinterpret_cast<const char*>(t.data()), t.nbytes());
}

std::shared_ptr<const ConstantData> GraphReader::read_file_data(const Json& data,
                                                                const std::string& pd,
                                                                const Value& v) {
  check_keys(data, pd, {"file", "tensor"}, "the data of a constant");
  std::string file = read_string(require(data, pd, "file", "the data of a constant"),
                                 pd + ".file", "file");
  std::string tensor = read_string(require(data, pd, "tensor", "the data of a constant"),
                                   pd + ".tensor", "tensor");
  if (file.empty()) fail(pd + ".file", "the file name is empty");
  // Relative to the graph file's folder.
  std::filesystem::path path(file);
  if (path.is_relative() && !doc_.file.empty())
    path = std::filesystem::path(doc_.file).parent_path() / path;
  std::string resolved = path.lexically_normal().string();
  auto it = data_files_.find(resolved);
  if (it == data_files_.end()) {
    std::shared_ptr<const MappedFile> mapped;
    try {
      mapped = std::make_shared<const MappedFile>(resolved);
    } catch (const UserError& e) {
      fail(pd + ".file", "cannot read the weights file of constant " + quote(v.name) + ": " +
                             e.what());
    }
    it = data_files_.emplace(resolved, std::move(mapped)).first;
  }
  const MappedFile& m = *it->second;
  std::map<std::string, SafetensorsEntry> index;
  try {
    std::string_view bytes(reinterpret_cast<const char*>(m.data()), m.size());
    index = index_safetensors(bytes, m.size(), resolved);
  } catch (const UserError& e) {
    fail(pd + ".file", std::string("the weights file is not valid safetensors: ") + e.what());
  }
  auto entry = index.find(tensor);
  if (entry == index.end()) {
    std::vector<std::string> names;
    for (const auto& [n, e] : index) names.push_back(n);
    fail(pd + ".tensor", "the weights file " + quote(file) + " has no tensor " + quote(tensor) +
                             did_you_mean(tensor, names));
  }
  const SafetensorsEntry& e = entry->second;
  if (e.dtype != v.dtype)
    fail(pd + ".tensor", "constant " + quote(v.name) + " is " + dtype_name(v.dtype) +
                             " but tensor " + quote(tensor) + " of " + quote(file) + " is " +
                             dtype_name(e.dtype));
  std::vector<Expr> shape;
  for (int64_t x : e.shape) shape.push_back(Expr(x));
  if (shape != v.shape)
    fail(pd + ".tensor", "constant " + quote(v.name) + " has shape " + shape_to_string(v.shape) +
                             " but tensor " + quote(tensor) + " of " + quote(file) +
                             " has shape " + shape_to_string(shape));
  return ConstantData::mapped(it->second, e.offset, e.size, file + ":" + tensor);
}

}  // namespace fuserc
