#include "runtime/dist/call_record.h"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace luda::dist::detail {

std::string_view call_name(Call call) {
  switch (call) {
    case Call::Barrier: return "barrier";
    case Call::Allreduce: return "allreduce";
    case Call::Broadcast: return "broadcast";
    case Call::Allgather: return "allgather";
    case Call::Send: return "send";
  }
  return "?";
}

CallRecord record_of(Call call, const NDArray* x, Op op, int root) {
  CallRecord r;
  std::memset(static_cast<void*>(&r), 0, sizeof r);  // padding too: the record travels as bytes
  r.call = call;
  r.op = static_cast<std::uint8_t>(op);
  r.root = root;
  if (x) {
    r.dtype = static_cast<std::uint8_t>(x->dtype());
    r.ndim = static_cast<std::uint8_t>(x->ndim());
    std::copy(x->shape().begin(), x->shape().end(), r.shape);
  }
  return r;
}

std::string rank_list(std::span<const int> ranks) {
  std::vector<int> sorted(ranks.begin(), ranks.end());
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::string> items;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    if (j - i >= 2) {
      items.push_back(fmt::format("{} to {}", sorted[i], sorted[j]));
    } else {
      for (std::size_t k = i; k <= j; ++k) items.push_back(std::to_string(sorted[k]));
    }
    i = j + 1;
  }
  std::string out = sorted.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? " and " : ", ";
    out += items[i];
  }
  return out;
}

namespace {

std::string array_text(const CallRecord& r) {
  Shape shape(r.shape, r.shape + std::min<int>(r.ndim, kMaxNdim));
  std::string_view dtype = r.dtype < kNumDTypes ? dtype_name(static_cast<DType>(r.dtype)) : "?";
  return fmt::format("{} {}", dtype, shape_str(shape));
}

// The ranks grouped by `key` of their record, groups in order of their first rank, each
// written "<ranks> <verb> <text>"; past five groups the rest are named together.
template <class Key>
std::string groups_text(std::span<const CallRecord> records, Key key, std::string_view verb, std::string_view rest) {
  std::vector<std::pair<std::string, std::vector<int>>> groups;
  for (std::size_t i = 0; i < records.size(); ++i) {
    std::string text = key(records[i]);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == text; });
    if (it == groups.end()) groups.push_back({std::move(text), {static_cast<int>(i)}});
    else it->second.push_back(static_cast<int>(i));
  }
  constexpr std::size_t kShown = 5;
  std::string out;
  std::vector<int> others;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (g >= kShown && groups.size() > kShown + 1) {
      others.insert(others.end(), groups[g].second.begin(), groups[g].second.end());
      continue;
    }
    if (!out.empty()) out += ", ";
    out += fmt::format("{} {} {}", rank_list(groups[g].second), verb, groups[g].first);
  }
  if (!others.empty()) out += fmt::format(", {} {}", rank_list(others), rest);
  return out;
}

template <class Key>
bool all_agree(std::span<const CallRecord> records, Key key) {
  for (const CallRecord& r : records)
    if (key(r) != key(records[0])) return false;
  return true;
}

}  // namespace

std::string mismatch_message(std::string_view fname, std::span<const CallRecord> records) {
  if (records.empty()) return "";
  auto call = [](const CallRecord& r) { return fmt::format("luda.dist.{}", call_name(r.call)); };
  if (!all_agree(records, call))
    return fmt::format("{}: the ranks made different calls: {}; every rank must make the same luda.dist calls in the "
                       "same order",
                       fname, groups_text(records, call, "called", "made other calls"));
  const Call c = records[0].call;
  if (c == Call::Barrier) return "";
  if (c == Call::Allreduce) {
    auto op = [](const CallRecord& r) {
      return r.op <= static_cast<int>(Op::Min) ? std::string(op_name(static_cast<Op>(r.op))) : "?";
    };
    if (!all_agree(records, op))
      return fmt::format("{}: the ranks asked for different operations: {}; every rank must pass the same op", fname,
                         groups_text(records, op, "asked for", "asked for others"));
  }
  if (c == Call::Broadcast) {
    auto root = [](const CallRecord& r) { return std::to_string(r.root); };
    if (!all_agree(records, root))
      return fmt::format("{}: the ranks named different roots: {}; every rank must pass the same root", fname,
                         groups_text(records, root, "named root", "named other roots"));
  }
  if (!all_agree(records, array_text))
    return fmt::format("{}: the ranks' arrays differ: {}; every rank must pass an array of the same dtype and shape",
                       fname, groups_text(records, array_text, "gave", "gave others"));
  return "";
}

}  // namespace luda::dist::detail
