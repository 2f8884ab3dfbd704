// Tests for NumPy-style broadcasting of symbolic shapes.
#include <catch2/catch.hpp>

#include "core/frontend/broadcasting.h"

using namespace fuserc;

namespace {
const Expr N = Expr::symbol("N", 1, 1000);
const Expr M = Expr::symbol("M", 1, 1000);
}  // namespace

TEST_CASE("shapes broadcast on the right", "[broadcast]") {
  auto r = broadcast_shapes({{N, Expr(4)}, {Expr(4)}});
  REQUIRE_FALSE(r.failure);
  CHECK(r.shape == std::vector<Expr>{N, Expr(4)});
  r = broadcast_shapes({{N, Expr(1)}, {Expr(1), Expr(7)}, {}});
  REQUIRE_FALSE(r.failure);
  CHECK(r.shape == std::vector<Expr>{N, Expr(7)});
  r = broadcast_shapes({{}, {}});
  REQUIRE_FALSE(r.failure);
  CHECK(r.shape.empty());
  r = broadcast_shapes({{Expr(1)}, {Expr(1)}});
  CHECK(r.shape == std::vector<Expr>{Expr(1)});
  // Equal expressions match, whatever their spelling.
  r = broadcast_shapes({{N * 2 + 2}, {(N + 1) * 2}});
  REQUIRE_FALSE(r.failure);
}

TEST_CASE("mismatches are reported with the operands and the dimension", "[broadcast]") {
  auto r = broadcast_shapes({{N, Expr(4)}, {N, Expr(5)}});
  REQUIRE(r.failure);
  CHECK(r.failure->dim == 1);
  CHECK(r.failure->operand_a == 0);
  CHECK(r.failure->operand_b == 1);
  CHECK(r.failure->reason == "extents 4 and 5 differ");
  r = broadcast_shapes({{N}, {Expr(3)}});
  REQUIRE(r.failure);
  CHECK(r.failure->reason ==
        "symbolic extent N cannot be matched with 3 (only a literal 1 broadcasts)");
  r = broadcast_shapes({{N}, {M}});
  REQUIRE(r.failure);
  CHECK(r.failure->reason == "symbolic extents N and M are not the same symbol");
}
