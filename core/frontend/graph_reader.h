// Owns the state shared by the pieces of the graph parser (document, symbols, names defined
// so far) and the helpers that read typed JSON values with placed errors. Internal to
// core/frontend: graph_parser.cc reads the document, op_reader.cc reads one op.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/json_reader.h"
#include "core/base/mapped_file.h"
#include "core/frontend/graph_limits.h"
#include "core/ir/fusion.h"

namespace fuserc {

using Json = nlohmann::json;

// "input name 'xxx...' is 300 characters long; the limit is 128"
std::string name_length_message(const std::string& name, const std::string& what);

class GraphReader {
 public:
  explicit GraphReader(const JsonDocument& doc) : doc_(doc) {}
  Fusion read();

 private:
  const JsonDocument& doc_;
  Fusion f_;
  std::map<std::string, int> symbol_index_;  // name -> index into f_.symbols
  std::set<std::string> bound_symbols_;      // symbols the inputs bind (plan_bindings)
  bool bindings_planned_ = false;
  std::map<std::string, std::shared_ptr<const MappedFile>> data_files_;  // weights files
  std::map<std::string, int> future_names_;  // op result name -> defining op index (pre-scan)
  // The op being read, so that every error inside it names the op.
  int cur_op_index_ = -1;
  const Json* cur_op_ = nullptr;

  // ---- errors
  [[noreturn]] void fail(const std::string& path, const std::string& message) const;
  // An error in op `k`: names the op, its output and the path.
  // A name longer than kMaxNameLength is refused (`what` says which name: "input name").
  void check_name_length(const std::string& name, const std::string& path,
                         const std::string& what) const;
  [[noreturn]] void fail_op(int k, const Json& op, const std::string& path,
                            const std::string& message) const;

  // ---- typed JSON access (graph_parser.cc)
  void check_keys(const Json& obj, const std::string& path, const std::vector<std::string>& allowed,
                  const std::string& what) const;
  const Json& require(const Json& obj, const std::string& path, const std::string& key,
                      const std::string& what) const;
  int64_t read_int(const Json& j, const std::string& path, const std::string& what) const;
  std::string read_string(const Json& j, const std::string& path, const std::string& what) const;
  std::string read_identifier(const Json& j, const std::string& path,
                              const std::string& what) const;
  const Json& read_array(const Json& j, const std::string& path, const std::string& what) const;
  DType read_dtype(const Json& j, const std::string& path) const;
  Literal read_literal(const Json& j, const std::string& path, const std::string& what) const;
  // A literal, or one of the strings "inf", "-inf", "nan" (JSON has no number for them).
  Literal read_number(const Json& j, const std::string& path, const std::string& what) const;

  // Extents: a positive integer (below 2^62), a symbol name or an extent expression
  // ("B*197", never negative). In input shapes an unknown symbol is declared; elsewhere it
  // must be bound by the inputs (plan_bindings).
  enum class ExtentUse { InputShape, Stride, OpAttribute };
  // `what` names the value in messages ("extent", "stride", "length", "a slice bound").
  Expr read_extent(const Json& j, const std::string& path, ExtentUse use, bool allow_minus_one,
                   bool allow_zero, const std::string& what = "extent");
  Expr symbol_expr(const std::string& name, const std::string& path, ExtentUse use);
  // An extent expression (a string that is not a plain symbol name), checked never negative.
  Expr read_extent_expr(const std::string& text, const std::string& path, ExtentUse use,
                        const std::string& what);
  // {"size": E} (an op argument, full's value): a size literal.
  Literal read_size_literal(const Json& j, const std::string& path);

  // ---- document parts (graph_parser.cc)
  void read_symbols(const Json& j);
  void read_inputs(const Json& j);
  void read_input_strides(const Json& j);
  void read_symbol_input(const Json& in, const std::string& path, Value& v);
  void read_constant(const Json& in, const std::string& path, Value& v);
  std::string read_inline_data(const Json& data, const std::string& path, const Value& v) const;
  void check_nesting(const Json& data, const std::string& path, const Value& v) const;
  std::shared_ptr<const ConstantData> read_file_data(const Json& data, const std::string& path,
                                                     const Value& v);
  // Decides how the inputs bind every symbol (f_.bind_steps); refuses a symbol of an input
  // shape that nothing binds.
  void plan_bindings();
  void prescan_op_names(const Json& ops);
  void read_outputs(const Json& j);
  void read_aliases(const Json& j);
  void check_new_name(const std::string& name, const std::string& path, int op_k,
                      const Json* op) const;

  // ---- one op (op_reader.cc)
  void read_op(int k, const Json& op);
  Operand read_arg(int k, const Json& op, const Json& a, const std::string& path);
  void read_attr(int k, const Json& op, OpKind kind, const std::string& key, const Json& v,
                 const std::string& path, OpAttrs& attrs);
};

}  // namespace fuserc
