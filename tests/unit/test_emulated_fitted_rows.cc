// Normalizations over rows whose length is a constant: the threads per row are fitted to the
// row's vectors (768 bf16 elements: 96 threads of one 8-element vector, 3 warps, 2 rows per
// block) instead of the power-of-two ladder that leaves threads without a vector, and the block
// reduction over 3, 12 or 20 warps gives the reference's results in the emulator. Symbolic row
// lengths keep the ladder.
#include <catch2/catch.hpp>

#include "core/schedule/reduction_buckets.h"
#include "emulated_check.h"
#include "op_coverage.h"

using namespace fuserc;
using namespace fuserc::testing;
using namespace fuserc::testing::coverage;

namespace {

// A normalization graph of op_coverage.h with its row length H made the constant `length`.
std::string with_constant_rows(std::string json, int64_t length) {
  const std::string sym = R"(, "H": {"hint": 1024})";
  size_t at = json.find(sym);
  REQUIRE(at != std::string::npos);
  json.erase(at, sym.size());
  const std::string h = "\"H\"", l = std::to_string(length);
  for (at = json.find(h); at != std::string::npos; at = json.find(h, at + l.size()))
    json.replace(at, h.size(), l);
  return json;
}

ReductionBucket only_bucket(int64_t length, int vector, double words) {
  auto b = normalization_buckets(Expr(length), vector, words, 1, false);
  REQUIRE(b.size() == 1);
  return b[0];
}

}  // namespace

TEST_CASE("a constant row length gets threads per row that leave no vector slot idle",
          "[buckets]") {
  // 768 bf16: 96 vectors, 96 threads (3 warps) of one vector; 2 rows make a 192-thread block.
  ReductionBucket b = only_bucket(768, 8, 1);
  CHECK(b.name == "t96");
  CHECK(b.threads == 96);
  CHECK(b.rows == 2);
  CHECK(b.persistent == 1);
  CHECK(b.limit == 0);
  // 768 f32: 192 vectors of 4, 96 threads of 2 (8 elements each, as t128 keeps at 1024).
  b = only_bucket(768, 4, 1);
  CHECK(b.threads == 96);
  CHECK(b.persistent == 2);
  // 3072 bf16: 384 threads, one vector each (t512 left 128 threads without one).
  b = only_bucket(3072, 8, 1);
  CHECK(b.threads == 384);
  CHECK(b.rows == 1);
  CHECK(b.persistent == 1);
  // 5000 bf16: 625 vectors; 640 threads leave 15 slots idle (t512 with 2 vectors left 399).
  b = only_bucket(5000, 8, 1);
  CHECK(b.threads == 640);
  CHECK(b.persistent == 1);
  // 96 bf16: 12 vectors; 16 threads (shuffles need a power of two below a warp), 8 rows.
  b = only_bucket(96, 8, 1);
  CHECK(b.threads == 16);
  CHECK(b.rows == 8);
  // Rows the ladder already covers exactly keep its bucket: 1024 bf16 on t128, 64 on t8.
  CHECK(only_bucket(1024, 8, 1).name == "t128");
  CHECK(only_bucket(64, 8, 1).name == "t8");
  CHECK(only_bucket(64, 8, 1).rows == 16);
  // 200 bf16 (25 vectors): no shape does better than a warp; not a multiple of 8: the ladder.
  CHECK(only_bucket(200, 8, 1).name == "t32");
  CHECK(only_bucket(1001, 8, 1).name == "t128");
  // A symbolic row length keeps the ladder (t128 for rows up to 1024 of bf16).
  auto sym = normalization_buckets(Expr::symbol("H", 513, 1024), 8, 1, 1, false);
  REQUIRE(sym.size() == 1);
  CHECK(sym[0].name == "t128");
  CHECK(sym[0].threads == 128);
}

TEST_CASE("normalizations over constant rows of 96, 200, 768, 3072 and 5000 elements",
          "[emulated][buckets]") {
  // Row length -> the bucket every graph's 32-bit variant ends with (f32 softmax: vectors of 4).
  struct Case {
    int64_t length;
    const char* half;  // 8-element vectors
    const char* f32;   // 4-element vectors
  };
  const Case cases[] = {{96, "_t16", "_t32"},
                        {200, "_t32", "_t32"},
                        {768, "_t96", "_t96"},
                        {3072, "_t384", "_t384"},
                        {5000, "_t640", "_t640"}};
  for (const auto& [name, symbolic] : normalization_graphs()) {
    for (const Case& c : cases) {
      INFO("graph " << name << ", rows of " << c.length);
      std::string json = with_constant_rows(symbolic, c.length);
      // Misaligned buffers take the scalar path (8 elements per thread at 768).
      auto launched = check_graph(json, {{{"N", 5}}, {{"N", 1}}});
      for (const auto& names : launched) {
        REQUIRE(names.size() == 1);
        INFO("kernel " << names[0]);
        const std::string want = name == "softmax" ? c.f32 : c.half;
        CHECK(names[0].size() > want.size());
        CHECK(names[0].compare(names[0].size() - want.size(), want.size(), want) == 0);
      }
    }
  }
}
