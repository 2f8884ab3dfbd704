// The top-down step of segmentation (merge_rules.h): a region between segment_set marks is one
// group when a scheduler takes it whole; otherwise it is shattered into single ops to merge
// bottom-up, or, when large, cut into chunks of consecutive ops first.
#include <algorithm>

#include "core/base/diagnostics.h"
#include "core/segment/merge_rules.h"
#include "core/segment/segmenter.h"

namespace fuserc {
namespace {

// Regions larger than this are first cut into chunks of this many consecutive ops (bottom-up
// merging costs about the cube of the ops it considers). Chunks a scheduler takes whole are
// joined with the next while the union stays within the schedulers' and the cost model's
// bounds; the others are merged bottom-up within the chunk. A chain of 100,000 elementwise ops
// becomes kernels of a few thousand ops each, in time linear in the chain.
constexpr size_t kMaxMergeOps = 128;

// Single-op groups of `members`, their ids added to `ids`; an op no scheduler takes is refused.
void add_single_op_groups(GroupGraph& g, const std::vector<int>& members,
                          const SegmentContext& ctx, std::set<int>& ids) {
  const Fusion& f = ctx.f;
  for (int k : members) {
    std::string reasons;
    if (!first_accepting(f, g.as_segment({k}), ctx.schedulers, &reasons)) {
      const Op& op = f.ops[k];
      std::string message = "op " + std::to_string(op.source_index) + " '" + op_name(op.kind) +
                            "' (out '" + f.value(op.outs[0]).name +
                            "'): not supported yet: no scheduler can compile it (" + reasons +
                            ")";
      // An op that writes an output in place into an input it reads elsewhere than at the
      // element written (a slice, an index_select of its own index): segment_fusion_in_place
      // gives it a copy of the input taken before the write, as for an overwrite cycle.
      for (const auto& [out, in] : f.aliases) {
        bool writes = std::find(op.outs.begin(), op.outs.end(), out) != op.outs.end();
        for (const Operand& a : op.args)
          if (writes && !a.is_literal() && a.value == in)
            throw OverwriteCycle(SourcePlace{f.source_file}, message, k, in);
      }
      throw UserError(SourcePlace{f.source_file}, message);
    }
    ids.insert(g.add_group({k}));
  }
}

}  // namespace

void group_region(GroupGraph& g, const std::vector<int>& ops, const SegmentContext& ctx,
                  std::vector<std::set<int>>& shattered, std::vector<int>& chunks) {
  const Fusion& f = ctx.f;
  auto shatter = [&](const std::vector<int>& members) {
    std::set<int> ids;
    add_single_op_groups(g, members, ctx, ids);
    shattered.push_back(std::move(ids));
  };
  if (first_accepting(f, g.as_segment(ops), ctx.schedulers)) {
    g.add_group(ops);
    return;
  }
  if (ops.size() <= kMaxMergeOps) {
    shatter(ops);
    return;
  }
  for (size_t begin = 0; begin < ops.size(); begin += kMaxMergeOps) {
    std::vector<int> chunk(ops.begin() + begin,
                           ops.begin() + std::min(ops.size(), begin + kMaxMergeOps));
    if (first_accepting(f, g.as_segment(chunk), ctx.schedulers)) {
      chunks.push_back(g.add_group(chunk));
    } else {
      shatter(chunk);
      chunks.push_back(-1);
    }
  }
  chunks.push_back(-1);
}

void group_cut_region(GroupGraph& g, const std::vector<std::vector<int>>& pieces,
                      const SegmentContext& ctx, std::vector<std::set<int>>& shattered) {
  std::set<int> ids;
  for (const auto& piece : pieces) {
    if (first_accepting(ctx.f, g.as_segment(piece), ctx.schedulers))
      ids.insert(g.add_group(piece));
    else
      add_single_op_groups(g, piece, ctx, ids);
  }
  shattered.push_back(std::move(ids));
}

std::set<int> join_chunks(GroupGraph& g, const std::vector<int>& chunks,
                          const SegmentContext& ctx) {
  std::set<int> out;
  int previous = -1;
  for (int id : chunks) {
    if (previous >= 0 && id >= 0 && g.may_merge(previous, id) &&
        first_accepting(ctx.f, g.merged_segment(previous, id), ctx.schedulers)) {
      g.merge(id, previous);
      continue;
    }
    if (id >= 0) out.insert(id);
    previous = id;
  }
  return out;
}

}  // namespace fuserc
