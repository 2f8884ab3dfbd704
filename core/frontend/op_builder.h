// Owns appending typed ops to a fusion while the front end expands one op of the graph into
// the ops that compute it (attention, convolution): each op appended is typed by shape
// inference (or given its type where inference would have to prove what the expansion knows),
// carries the expanded op's source index, and defines a fresh value named after the op's
// result ("<out>_qk"), the last one the result itself.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/ir/fusion.h"

namespace fuserc {

class OpBuilder {
 public:
  using Fresh = std::function<std::string(const std::string&)>;
  OpBuilder(Fusion& f, int source_index, std::string out, Fresh fresh)
      : f_(f), source_(source_index), out_(std::move(out)), fresh_(std::move(fresh)) {}

  // Appends `kind` typed by shape inference (throws OpError as inference does). `name` is a
  // suffix of the result's name, or the result's own name when `final`.
  ValueId emit(OpKind kind, std::vector<Operand> args, OpAttrs attrs, const std::string& name,
               bool final = false);
  // The same with the result's type given.
  ValueId emit_typed(OpKind kind, std::vector<Operand> args, OpAttrs attrs,
                     const std::string& name, DType dtype, std::vector<Expr> shape,
                     bool final = false);

  const Value& value(ValueId v) const { return f_.value(v); }

  static Operand tensor(ValueId v);
  static Operand literal(Literal l);
  static OpAttrs dims(std::vector<int64_t> d, bool keepdim);
  static OpAttrs dtype(DType t);
  static OpAttrs dim(int64_t d);
  static OpAttrs shape(std::vector<Expr> s);

 private:
  Fusion& f_;
  int source_;
  std::string out_;
  Fresh fresh_;
};

}  // namespace fuserc
