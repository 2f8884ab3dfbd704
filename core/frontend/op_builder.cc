// Appending typed ops during the front end's expansions (see op_builder.h).
#include "core/frontend/op_builder.h"

#include "core/base/diagnostics.h"
#include "core/frontend/shape_inference.h"

namespace fuserc {

ValueId OpBuilder::emit(OpKind kind, std::vector<Operand> args, OpAttrs attrs,
                        const std::string& name, bool final) {
  Op o;
  o.kind = kind;
  o.args = std::move(args);
  o.attrs = std::move(attrs);
  std::vector<InferredResult> r = infer_op(f_, o);
  FUSERC_CHECK(r.size() == 1, "an op of an expansion has one result");
  return emit_typed(kind, std::move(o.args), std::move(o.attrs), name, r[0].dtype,
                    std::move(r[0].shape), final);
}

ValueId OpBuilder::emit_typed(OpKind kind, std::vector<Operand> args, OpAttrs attrs,
                              const std::string& name, DType dtype, std::vector<Expr> shape,
                              bool final) {
  Op o;
  o.kind = kind;
  o.args = std::move(args);
  o.attrs = std::move(attrs);
  o.source_index = source_;
  Value v;
  v.name = final ? name : fresh_(out_ + "_" + name);
  v.dtype = dtype;
  v.shape = std::move(shape);
  v.def_op = static_cast<int>(f_.ops.size());
  ValueId id = f_.add_value(std::move(v));
  o.outs.push_back(id);
  f_.ops.push_back(std::move(o));
  return id;
}

Operand OpBuilder::tensor(ValueId v) {
  Operand o;
  o.value = v;
  return o;
}

Operand OpBuilder::literal(Literal l) {
  Operand o;
  o.literal = l;
  return o;
}

OpAttrs OpBuilder::dims(std::vector<int64_t> d, bool keepdim) {
  OpAttrs a;
  a.dims = std::move(d);
  a.keepdim = keepdim;
  return a;
}

OpAttrs OpBuilder::dtype(DType t) {
  OpAttrs a;
  a.dtype = t;
  return a;
}

OpAttrs OpBuilder::dim(int64_t d) {
  OpAttrs a;
  a.dim = d;
  return a;
}

OpAttrs OpBuilder::shape(std::vector<Expr> s) {
  OpAttrs a;
  a.shape = std::move(s);
  return a;
}

}  // namespace fuserc
