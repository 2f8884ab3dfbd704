// Owns what a reduction kernel does once a phase's elements are folded in: combining the
// accumulators across the row's threads (fz_row_reduce / fz_column_reduce) and, for rows split
// across blocks, across blocks (partials, the last block folds them), then the row's results
// (and the reciprocals of online log-sum-exp sums divided by) as locals the later passes use.
#include <map>
#include <string>
#include <vector>

#include "codegen/lower/reduction_lowering_impl.h"

namespace fuserc::lower::detail {

void ReductionLowering::use_row_results(ElementEmitter& em) const {
  for (const auto& [node, value] : reduced_values_) em.set_override(node, value);
  for (const auto& [node, value] : reciprocals_) em.set_reciprocal(node, value);
}

void ReductionLowering::set_reduced_values(const Accumulator& acc,
                                           const std::vector<std::string>& locals) {
  for (size_t id = 0; id < graph_.nodes().size(); ++id) {
    const ENode& n = graph_.node(id);
    if (n.kind != ENode::Kind::Reduced) continue;
    int at = n.reduction == acc.reduction                             ? n.output
             : (acc.online_sum >= 0 && n.reduction == acc.online_sum) ? 1
                                                                      : -1;
    if (at >= 0)
      reduced_values_[static_cast<int>(id)] = kir::ref(locals[at], kir::compute_type_of(n.dtype));
  }
}

// An f32 division by the sum of an online log-sum-exp (softmax's e / s) multiplies by the
// sum's reciprocal, computed once per row (an IEEE division per element costs about ten
// instructions). The sum lies in [1, row length] or is NaN, so 1 / s neither overflows nor
// underflows, and x * (1 / s) is within 1.5 ulp of x / s (the oracle allows 2e-5 relative for
// f32). f64 divisions (and f16 arithmetic) stay divisions.
void ReductionLowering::add_reciprocals(Ctx& c, kir::Block& b, const Accumulator& acc) {
  // An online log-sum-exp's sum, or a softmax's sum that a persistent variant accumulates in
  // a phase of its own (separate_online_lse).
  int sum = acc.online_sum;
  if (sum < 0 && acc.op == OpKind::Sum && given_.reductions[acc.reduction].online_max >= 0)
    sum = acc.reduction;
  if (sum < 0) return;
  std::map<int, kir::ValuePtr> of_divisor;
  for (size_t id = 0; id < graph_.nodes().size(); ++id) {
    const ENode& n = graph_.node(id);
    if (n.kind != ENode::Kind::Op || n.op != OpKind::Div || n.computation != DType::F32 ||
        n.args.size() != 2)
      continue;
    const ENode& d = graph_.node(n.args[1]);
    if (d.kind != ENode::Kind::Reduced || d.reduction != sum ||
        d.dtype != DType::F32)
      continue;
    auto it = reduced_values_.find(n.args[1]);
    if (it == reduced_values_.end()) continue;
    kir::ValuePtr& r = of_divisor[n.args[1]];
    if (!r) {
      std::string local = c.names.fresh(f_.value(d.value).name + "_inv");
      b.push_back(kir::let(kir::Type::Float, local,
                           kir::op(OpKind::Div, DType::F32, kir::Type::Float,
                                   {kir::literal(Literal::of_float(1.0), kir::Type::Float),
                                    it->second})));
      r = kir::ref(local, kir::Type::Float);
    }
    reciprocals_[static_cast<int>(id)] = r;
  }
}

void ReductionLowering::block_combine(kir::Block& b, const std::vector<Accumulator*>& accs) const {
  for (Accumulator* acc : accs) {
    std::string fn;
    std::vector<kir::ValuePtr> args;
    args.reserve(3);
    args.push_back(kir::ref(acc->name, acc->type));
    args.push_back(kir::call(acc->functor, acc->type, {}));
    if (p_.inner) {
      fn = "fz_row_reduce<" + std::to_string(p_.threads_per_row) + ">";
      args.push_back(p_.threads_per_row > 32
                         ? kir::ref(acc->smem, acc->type)
                         : kir::literal(Literal::of_int(0), kir::Type::Int32));
    } else {
      fn = "fz_column_reduce<" + std::to_string(p_.rows_per_block) + ", " +
           std::to_string(p_.threads_per_row) + ">";
      args.push_back(kir::ref(acc->smem, acc->type));
    }
    b.push_back(kir::assign(acc->name, kir::call(fn, acc->type, std::move(args))));
  }
}

std::vector<kir::ValuePtr> ReductionLowering::variance_from_registers(
    Ctx& c, kir::Block& b, const Accumulator& sum, Accumulator& m2, const Expr& row,
    const Expr& row_block) {
  const DType dt = sum.acc;
  const kir::Type t = sum.type;
  const kir::ValuePtr n = row_length_as(a_.row_length, c.index_type, dt);
  const std::string base = f_.value(a_.reductions[sum.reduction].outputs[0]).name;
  const std::string mean = c.names.fresh("mean_of_" + base);
  b.push_back(kir::let(t, mean, kir::op(OpKind::Div, dt, t, {kir::ref(sum.name, t), n})));
  b.push_back(kir::declare(t, m2.name, accumulator_identity(m2)));
  const DType in = graph_.node(m2.input_node).dtype;
  kir::Block pass = row_pass(
      c, row, false, false, {m2.input_node},
      [&](const std::vector<kir::ValuePtr>& v, kir::Block& body) {
        kir::ValuePtr x = v[0];
        if (canonical_dtype(in) != dt) x = kir::convert(x, in, dt);
        kir::ValuePtr d = kir::op(OpKind::Sub, dt, t, {x, kir::ref(mean, t)});
        body.push_back(kir::assign(
            m2.name, kir::op(OpKind::Add, dt, t,
                             {kir::ref(m2.name, t), kir::op(OpKind::Mul, dt, t, {d, d})})));
      },
      kNoFull);
  b.push_back(kir::if_then(kir::ref(c.active, kir::Type::Bool), std::move(pass)));
  combine_phase(c, b, {&m2}, false, row, row_block);
  // m2 / max(n - correction, 0): the variance of fewer elements than the correction is m2 / 0.
  const kir::ValuePtr dof = kir::op(
      OpKind::Maximum, dt, t,
      {kir::op(OpKind::Sub, dt, t, {n, kir::literal(Literal::of_int(sum.correction), t)}),
       kir::literal(Literal::of_int(0), t)});
  std::vector<kir::ValuePtr> r = {kir::op(OpKind::Div, dt, t, {kir::ref(m2.name, t), dof})};
  if (sum.outputs > 1) r.push_back(kir::ref(mean, t));
  return r;
}

void ReductionLowering::combine_phase(Ctx& c, kir::Block& b, const std::vector<Accumulator*>& accs,
                                      bool grid, const Expr& row, const Expr& row_block) {
  block_combine(b, accs);
  if (!grid) return;
  // Split rows (gridDim.y > 1, a uniform test): every block of the row group writes its
  // partials; the last to arrive folds them, thread t taking partials t, t + T, ... in order,
  // then the same tree as above, so the result is the same bits for a given split whichever
  // block finished last.
  Expr gy = Expr::index("gridDim.y", Expr(kMaxSplit + 1));
  Expr by = Expr::index("blockIdx.y", Expr(kMaxSplit));
  Expr lead = Expr::index(p_.inner ? "threadIdx.x" : "threadIdx.y", Expr(p_.threads_per_row));
  kir::Block split;
  kir::Block write;
  for (Accumulator* acc : accs)
    write.push_back(
        kir::element_store(acc->partials, row * gy + by, kir::ref(acc->name, acc->type)));
  split.push_back(
      kir::if_then(kir::all_of({kir::ref(c.active, kir::Type::Bool),
                                kir::index_value(eq(lead, Expr(0)), kir::Type::Bool)}),
                   std::move(write)));
  split.push_back(kir::let(kir::Type::Bool, c.last,
                           kir::call("fz_last_block", kir::Type::Bool,
                                     {kir::ref(c.counters, kir::Type::UInt32),
                                      kir::index_value(row_block, c.index_type),
                                      kir::index_value(gy, kir::Type::UInt32)})));
  kir::ValuePtr not_last = kir::op(OpKind::LogicalNot, DType::Bool, kir::Type::Bool,
                                   {kir::ref(c.last, kir::Type::Bool)});
  split.push_back(kir::if_then(not_last, {p_.inner ? kir::continue_loop() : kir::ret()}));
  Expr g = Expr::index(c.g, Expr(kMaxSplit + 1));
  kir::Block loop;
  for (Accumulator* acc : accs) {
    split.push_back(kir::assign(acc->name, accumulator_identity(*acc)));
    kir::ValuePtr partial = kir::call(
        "fz_load_cg", acc->type,
        {kir::ref(acc->partials, acc->type), kir::index_value(row * gy + g, c.index_type)});
    loop.push_back(kir::assign(
        acc->name, accumulator_combine(*acc, kir::ref(acc->name, acc->type), partial)));
  }
  kir::Block fold;
  fold.push_back(kir::for_loop(kir::Type::Int32, c.g, lead, gy, std::move(loop), false,
                               Expr(p_.threads_per_row)));
  split.push_back(kir::if_then(kir::ref(c.active, kir::Type::Bool), std::move(fold)));
  block_combine(split, accs);
  b.push_back(kir::if_then(kir::index_value(lt(Expr(1), gy), kir::Type::Bool), std::move(split)));
}

}  // namespace fuserc::lower::detail
