#include "codegen/lower/combo_kernel.h"

#include <map>
#include <set>
#include <tuple>

#include "codegen/cuda/cuda_emitter.h"
#include "codegen/lower/lowering_common.h"
#include "core/base/diagnostics.h"

namespace fuserc::lower {
namespace {

constexpr int64_t kMaxGridX = 2147483647;

bool one_dimensional(const KernelSummary& k) {
  return k.grid[1].is_const(1) && k.grid[2].is_const(1) && k.block[0].is_const() &&
         k.block[1].is_const(1) && k.block[2].is_const(1) && k.dynamic_shared_bytes.is_const(0);
}

// Every parameter counts 8 bytes: a bound with the alignment padding between them.
constexpr size_t kParamBytes = 8;

// What identifies a parameter across members: the same value (or symbol, or size) passed the
// same way is passed once.
using ParamKey = std::tuple<int, ValueId, std::string, std::string>;
ParamKey key_of(const KernelArg& a, const kir::Param& p) {
  std::string what = a.role == KernelArg::Role::Symbol ? a.symbol
                     : a.role == KernelArg::Role::Size ? a.size.str()
                                                        : std::string();
  return {static_cast<int>(a.role), a.value, what, cuda::param_c_type(p)};
}

// The variant of a member a combo variant uses: its first (32-bit) one in the combo's first
// variant, its last otherwise.
const LoweredKernel& pick(const std::vector<LoweredKernel>& variants, bool first) {
  return first ? variants.front() : variants.back();
}

}  // namespace

bool combinable(const std::vector<LoweredKernel>& variants) {
  if (variants.empty() || variants.size() > 2) return false;
  for (const auto& v : variants) {
    const KernelSummary& k = v.summary;
    if (k.scheduler != SchedulerKind::Pointwise || !one_dimensional(k) || !k.allocations.empty() ||
        k.uses_rng || k.cooperative || k.block_reduction || k.grid_reduction ||
        !v.kernel.callees.empty())
      return false;
  }
  return variants.size() == 1 || (!variants[0].summary.index64 && variants[1].summary.index64);
}

std::vector<std::vector<int>> plan_combos(const std::vector<std::vector<LoweredKernel>>& members) {
  struct Open {
    std::vector<int> members;
    std::set<ParamKey> params;
    size_t bytes = 0;
  };
  std::map<int64_t, Open> open;  // by block size
  std::vector<std::vector<int>> out;
  for (size_t m = 0; m < members.size(); ++m) {
    if (!combinable(members[m])) {
      out.push_back({static_cast<int>(m)});
      continue;
    }
    const LoweredKernel& lk = members[m].back();
    int64_t block = lk.summary.block[0].value();
    // Bytes this member adds: the parameters no earlier member passes, and its range's start.
    std::set<ParamKey> mine;
    for (const auto& v : members[m])
      for (size_t a = 0; a < v.summary.args.size(); ++a)
        mine.insert(key_of(v.summary.args[a], v.kernel.params[a]));
    Open& o = open[block];
    auto added = [&] {
      size_t bytes = kParamBytes;  // the range's start
      for (const auto& key : mine)
        if (!o.params.count(key)) bytes += kParamBytes;
      return bytes;
    };
    if (!o.members.empty() &&
        (o.members.size() >= kMaxComboMembers || o.bytes + added() > kMaxComboParamBytes)) {
      out.push_back(std::move(o.members));
      o = Open{};
    }
    o.bytes += added();
    o.members.push_back(static_cast<int>(m));
    o.params.insert(mine.begin(), mine.end());
  }
  for (auto& [block, o] : open)
    if (!o.members.empty()) out.push_back(std::move(o.members));
  return out;
}

std::vector<LoweredKernel> lower_combo(const std::vector<std::vector<LoweredKernel>>& members,
                                       const std::vector<int>& which, const std::string& name) {
  FUSERC_CHECK(which.size() >= 2, "a combo kernel of fewer than two members");
  bool pairs = false;
  for (int m : which) pairs = pairs || members[m].size() == 2;
  std::vector<LoweredKernel> out;
  for (int variant = 0; variant < (pairs ? 2 : 1); ++variant) {
    bool first = pairs && variant == 0;
    LoweredKernel lk;
    KernelSummary& ks = lk.summary;
    kir::Kernel& k = lk.kernel;
    ks.name = k.name = pairs ? name + (first ? "_i32" : "_i64") : name;
    ks.scheduler = SchedulerKind::Pointwise;
    k.index_type = kir::Type::Int64;  // the ranges' starts are long long
    int64_t block = pick(members[which[0]], first).summary.block[0].value();
    k.max_threads = static_cast<int>(block);
    ks.block[0] = Expr(block);
    lk.selected_when = Expr(1);

    std::map<ParamKey, std::string> passed;  // parameter -> its name in the combo kernel
    std::map<std::string, size_t> functions;   // a member function's text -> its callee
    std::set<std::string> guard_seen;
    std::vector<std::vector<std::string>> users;  // per callee, the members calling it
    std::set<std::string> taken;
    Expr total(0);
    std::vector<std::string> member_names;
    for (size_t i = 0; i < which.size(); ++i) {
      const LoweredKernel& mv = pick(members[which[i]], first);
      if (first && members[which[i]].size() == 2) lk.selected_when = min(lk.selected_when, mv.selected_when);
      for (const auto& g : mv.summary.guards)  // a symbol's range guard once, not per member
        if (guard_seen.insert(g.condition.str() + "\n" + g.message).second) ks.guards.push_back(g);
      ks.index64 = ks.index64 || mv.summary.index64;
      ks.min_compute_capability =
          std::max(ks.min_compute_capability, mv.summary.min_compute_capability);
      // The member's own arguments, passed through (once each).
      std::vector<kir::ValuePtr> call_args;
      for (size_t a = 0; a < mv.summary.args.size(); ++a) {
        const KernelArg& arg = mv.summary.args[a];
        const kir::Param& p = mv.kernel.params[a];
        ParamKey key = key_of(arg, p);
        auto it = passed.find(key);
        if (it == passed.end()) {
          // The combo's own names (fz_start1, fz_member0): a value or symbol of the graph
          // named so is passed under another name.
          bool ours = p.name.rfind("fz_start", 0) == 0 || p.name.rfind("fz_member", 0) == 0;
          std::string base = ours ? "v_" + p.name : p.name;
          std::string pname = base;
          for (int n = 2; taken.count(pname); ++n) pname = base + "_" + std::to_string(n);
          taken.insert(pname);
          it = passed.emplace(key, pname).first;
          kir::Param q = p;
          q.name = pname;
          q.restrict = false;  // passed through; the member's own parameter says restrict
          k.params.push_back(q);
          KernelArg qa = arg;
          qa.name = pname;
          ks.args.push_back(qa);
        }
        call_args.push_back(kir::ref(it->second, kir::Type::Int64));
      }
      // The member's range of blocks starts at the sum of the grids before it.
      Expr start = total;
      std::string start_name;
      if (i > 0) {
        start_name = "fz_start" + std::to_string(i);
        add_size_param(start_name, start, k, ks);
      }
      total = total + mv.summary.grid[0];
      // Members that differ only in names (parameters of one shape) share one function.
      std::string text = cuda::member_function(mv.kernel, "fz_member");
      auto [fn, fresh] = functions.emplace(text, k.callees.size());
      if (fresh) {
        kir::Kernel callee = mv.kernel;
        callee.name = "fz_member" + std::to_string(k.callees.size());
        k.callees.push_back(std::move(callee));
        users.emplace_back();
      }
      kir::Kernel& callee = k.callees[fn->second];
      users[fn->second].push_back(mv.kernel.name);
      member_names.push_back(mv.kernel.name);
      Expr bx = Expr::index("blockIdx.x", Expr(kMaxGridX));
      Expr local = i == 0 ? bx : bx - Expr::index(start_name, Expr(kMaxGridX));
      call_args.push_back(kir::index_value(local, kir::Type::Int64));
      kir::Block run;
      run.push_back(kir::comment(mv.kernel.name));
      run.push_back(kir::eval(kir::call(callee.name, kir::Type::Int32, std::move(call_args))));
      if (i + 1 == which.size()) {
        for (auto& st : run) k.body.push_back(std::move(st));
      } else {
        run.push_back(kir::ret());
        Expr end = Expr::index("fz_start" + std::to_string(i + 1), Expr(kMaxGridX));
        k.body.push_back(kir::if_then(kir::index_value(lt(bx, end), kir::Type::Bool), std::move(run)));
      }
    }
    for (size_t c = 0; c < k.callees.size(); ++c) {
      std::string list;
      for (const auto& n : users[c]) list += (list.empty() ? "" : ", ") + n;
      auto& comment = k.callees[c].header_comment;
      comment.insert(comment.begin(), "member function of " + ks.name + " for " + list + ":");
      k.callees[c].called_often = users[c].size() > 1;
    }
    ks.grid[0] = total;
    Expr fits = le(total, Expr(kMaxGridX));
    if (!fits.is_const(1))
      ks.guards.push_back({KernelGuard::Kind::LaunchLimit, fits,
                           "kernel " + ks.name + " would need more than 2^31 - 1 blocks"});
    std::string list;
    for (const auto& n : member_names) list += (list.empty() ? "" : ", ") + n;
    ks.scheduler_params = {{"combo", std::to_string(which.size())},
                           {"block", std::to_string(block)},
                           {"index", ks.index64 ? "64-bit" : "32-bit"}};
    ks.comment = std::to_string(which.size()) + " pointwise kernels side by side: " + list;
    ks.variant_note = "a range of blocks per member kernel, in order";
    k.header_comment = {"fuserc: combo kernel " + ks.name + ", " + ks.comment};
    if (first) lk.reason = "every index of the members with a 32-bit kernel fits in 32 bits";
    out.push_back(std::move(lk));
  }
  return out;
}

}  // namespace fuserc::lower
