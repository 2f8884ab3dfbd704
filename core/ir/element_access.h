// Owns index propagation, the rule every per-element consumer of the IR shares: to compute the
// element of an op's result at given coordinates, at which coordinates each operand is read.
// Views (broadcast, expand, permute, reshape, squeeze, unsqueeze, slice) become index
// arithmetic; pad and cat read their operands at shifted coordinates (which operand, or the
// fill, a condition on the coordinates decides); index_select and gather read their input at a
// coordinate along `dim` that is an element of the index tensor. Used by lowering (codegen's
// element graph) and by the schedulers' cost model, so both agree on what a kernel recomputes.
#pragma once

#include <vector>

#include "core/ir/fusion.h"

namespace fuserc {

// Row-major linear index of `coords` in `shape`, and back (successive division).
Expr linearize(const std::vector<Expr>& coords, const std::vector<Expr>& shape);
std::vector<Expr> delinearize(const Expr& linear, const std::vector<Expr>& shape);

// Coordinates of a broadcast operand of `shape` inside a result of rank coords.size():
// aligned on the right, literal-1 extents read coordinate 0.
std::vector<Expr> broadcast_coords(const std::vector<Expr>& coords, const std::vector<Expr>& shape);

// A condition (1 when it always holds, 0 when it never does) under which the strides of
// input `v` give each of its elements a memory location of its own, so that it can be
// written in place: sorted by stride (at the symbols' hints), each stride is at least the
// span of the dimensions below it. An empty or one-element tensor always qualifies.
Expr elements_distinct(const Fusion& f, const Value& v);

// True for the ops computed element by element from their operands (elementwise ops, views,
// pad, cat, creation, random, segment_set): those operand_coords answers for.
bool has_element_access(const Op& op);

// For each argument of `op` (in order), the coordinates at which computing the result element
// at `coords` reads it; an empty list for literal arguments (and for rank-0 values). For
// index_select and gather the input's coordinate along `dim` is the element of the index read
// at the index's coordinates; `indexed` stands for it (default: indexed_placeholder).
std::vector<std::vector<Expr>> operand_coords(const Fusion& f, const Op& op,
                                              const std::vector<Expr>& coords,
                                              const Expr* indexed = nullptr);

bool is_indexing(const Op& op);  // index_select or gather
// A stand-in for the (clamped) index value of an indexing op: an index variable in
// [0, extent of the indexed dimension) named `name`.
Expr indexed_placeholder(const Fusion& f, const Op& op, const std::string& name = "fz_ix");

}  // namespace fuserc
