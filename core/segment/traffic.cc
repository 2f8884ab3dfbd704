#include "core/segment/traffic.h"

#include <algorithm>
#include <stdexcept>

namespace fuserc {
namespace {

constexpr int64_t kLargest = int64_t{1} << 20;

// `e` at a point, or `fallback` where it cannot be evaluated there (a division by zero at an
// empty binding, an overflow).
int64_t at_point(const HeuristicHints& p, const Expr& e, int64_t fallback) {
  try {
    return p.value_of(e);
  } catch (const std::exception&) {
    return fallback;
  }
}

}  // namespace

TrafficPoints TrafficPoints::from(const Fusion& f, const HeuristicHints& hints) {
  TrafficPoints t;
  t.points.push_back(hints);
  HeuristicHints lo, hi;
  for (const auto& s : f.symbols) {
    lo.symbols.emplace_back(s.name, s.min);
    int64_t top = s.max > 0 ? std::min(s.max, kLargest) : kLargest;
    hi.symbols.emplace_back(s.name, std::max(top, s.min));
  }
  t.points.push_back(std::move(lo));
  t.points.push_back(std::move(hi));
  return t;
}

GroupTraffic group_traffic(const Fusion& f, const Segment& group) {
  GroupTraffic t;
  for (ValueId v : group.inputs)
    if (!f.value(v).scalar_input) t.reads[v];
  std::map<ValueId, bool> whole;
  for (int k : group.ops) {
    const Op& op = f.ops[k];
    for (const auto& a : op.args) {
      if (a.is_literal() || !t.reads.count(a.value)) continue;
      if (op.kind == OpKind::Slice)
        t.reads[a.value].push_back(k);
      else
        whole[a.value] = true;
    }
  }
  for (const auto& [v, w] : whole)
    if (w) t.reads[v].clear();
  t.writes = group.outputs;
  return t;
}

GroupTraffic merged_siblings(const GroupTraffic& a, const GroupTraffic& b) {
  GroupTraffic t = a;
  for (const auto& [v, slices] : b.reads) {
    auto it = t.reads.find(v);
    if (it == t.reads.end()) {
      t.reads.emplace(v, slices);
    } else if (it->second.empty() || slices.empty()) {
      it->second.clear();
    } else {
      it->second.insert(it->second.end(), slices.begin(), slices.end());
    }
  }
  t.writes.insert(t.writes.end(), b.writes.begin(), b.writes.end());
  std::sort(t.writes.begin(), t.writes.end());
  t.writes.erase(std::unique(t.writes.begin(), t.writes.end()), t.writes.end());
  return t;
}

Bytes read_bytes(const Fusion& f, ValueId v, const std::vector<int>& slices,
                 const TrafficPoints& at) {
  const Value& val = f.value(v);
  const double size = static_cast<double>(dtype_size(val.dtype));
  Bytes out;
  for (const HeuristicHints& p : at.points) {
    double bytes = size;
    for (size_t d = 0; d < val.shape.size(); ++d) {
      int64_t extent = std::max<int64_t>(0, at_point(p, val.shape[d], 0));
      int64_t lo = extent, hi = 0;
      if (slices.empty()) lo = 0, hi = extent;
      for (int k : slices) {
        const OpAttrs& s = f.ops[k].attrs;
        lo = std::min(lo, std::clamp<int64_t>(at_point(p, s.starts[d], 0), 0, extent));
        hi = std::max(hi, std::clamp<int64_t>(at_point(p, s.ends[d], extent), 0, extent));
      }
      bytes *= static_cast<double>(std::max<int64_t>(0, hi - lo));
    }
    out.push_back(bytes);
  }
  return out;
}

Bytes traffic_bytes(const Fusion& f, const GroupTraffic& t, const TrafficPoints& at) {
  Bytes total(at.points.size(), 0.0);
  for (const auto& [v, slices] : t.reads) {
    Bytes b = read_bytes(f, v, slices, at);
    for (size_t i = 0; i < total.size(); ++i) total[i] += b[i];
  }
  for (ValueId v : t.writes) {
    Bytes b = read_bytes(f, v, {}, at);
    for (size_t i = 0; i < total.size(); ++i) total[i] += b[i];
  }
  return total;
}

Bytes saving(const Bytes& a, const Bytes& b, const Bytes& merged) {
  Bytes s(a.size());
  for (size_t i = 0; i < a.size(); ++i) s[i] = a[i] + b[i] - merged[i];
  return s;
}

bool worth_merging(const Bytes& saving, int kernels) {
  const double launches = kernels * kLaunchBytes;
  if (saving.empty() || saving[0] + launches <= 0) return false;
  for (double s : saving)
    if (s + launches < 0) return false;
  return true;
}

}  // namespace fuserc
