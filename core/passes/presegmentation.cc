#include "core/passes/presegmentation.h"

namespace fuserc {

const std::vector<FusionPass>& presegmentation_passes() {
  static const std::vector<FusionPass> passes = {
      {"fold-constants", "compute values made from constants alone once, as new constants",
       fold_constants},
      {"fold-batch-norm",
       "scale a convolution's constant weights by the per-channel scale after it (an inference "
       "batch norm) and add one bias",
       fold_batch_norm},
      {"fold-casts", "cast the original value where a cast of an exact cast was", fold_casts},
      {"collapse-views", "read through one view where a view of a view was", collapse_views},
      {"noop-views", "remove views that give back their operand unchanged", remove_noop_views},
      {"split-wide-cats", "make a cat of more than 256 tensors a cat of cats of at most 256",
       split_wide_cats},
      {"fuse-epilogues",
       "apply a bias, an activation and a cast in a matrix product before it writes",
       fuse_library_epilogues},
      {"absorb-views",
       "read views of a matrix product's operands in place; write a permute of its result",
       absorb_operand_views},
      {"library-out-of-place",
       "a library step written in place into a tensor it reads, or into an input with declared "
       "strides, writes a new value that a kernel copies there",
       write_library_results_out_of_place},
      {"dead-code", "remove ops whose results no output needs", remove_dead_ops},
  };
  return passes;
}

void run_presegmentation_passes(Fusion& fusion, PassContext& ctx) {
  for (const auto& pass : presegmentation_passes()) {
    ctx.timed(pass.name, [&] { pass.run(fusion); });
    verify_fusion(fusion);
    ctx.dump(pass.name, [&] { return fusion.to_text(); });
  }
}

}  // namespace fuserc
