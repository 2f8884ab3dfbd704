// Owns the ordered list of passes that run on the Fusion before segmentation, in one place
// (like Halide's Lower.cpp): each has a name usable with --dump-after and --time-passes.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/ir/fusion.h"
#include "core/passes/pass_context.h"

namespace fuserc {

struct FusionPass {
  const char* name;
  const char* summary;
  std::function<void(Fusion&)> run;
};

// The passes, in the order they run.
const std::vector<FusionPass>& presegmentation_passes();

// Runs every pass (timed, dumped as asked), verifying the IR after each.
void run_presegmentation_passes(Fusion& fusion, PassContext& ctx);

// Individual passes (one file each), in the order they run.
void fold_constants(Fusion& fusion);     // fold_constants.cc (uses core/eval)
void fold_batch_norm(Fusion& fusion);    // fold_batch_norm.cc
void fold_casts(Fusion& fusion);         // fold_casts.cc
void collapse_views(Fusion& fusion);     // collapse_views.cc
void remove_noop_views(Fusion& fusion);  // noop_views.cc
void split_wide_cats(Fusion& fusion);    // split_wide_cats.cc
void fuse_library_epilogues(Fusion& fusion);  // fuse_epilogues.cc
void absorb_operand_views(Fusion& fusion);    // absorb_views.cc
void write_library_results_out_of_place(Fusion& fusion);  // library_out_of_place.cc
void remove_dead_ops(Fusion& fusion);    // dead_code.cc

// The IR verifier: structural invariants every pass must keep. Throws InternalError.
void verify_fusion(const Fusion& fusion);  // fusion_verifier.cc

}  // namespace fuserc
