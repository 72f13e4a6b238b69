#include "dsl/find_function.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>

#include "dsl/diagnostics.h"
#include "dsl/lexer.h"
#include "dsl/parser.h"

namespace luda::dsl {

namespace {

// A small cache: a process compiles kernels from a handful of chunks. Past kMaxEntries the
// oldest chunk is dropped (its trees live on in whoever still holds them).
constexpr std::size_t kMaxEntries = 64;

class ParseCache {
 public:
  std::shared_ptr<const Ast> get(const Chunk& chunk, ChunkForm form) {
    std::string key;
    key.reserve(chunk.name.size() + chunk.text.size() + 2);
    key.push_back(form == ChunkForm::Chunk ? 'c' : 'f');
    key += chunk.name;
    key.push_back('\0');
    key += chunk.text;
    key.push_back('\0');
    key += std::to_string(chunk.hidden_prefix);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = map_.find(key);
      if (it != map_.end()) {
        ++hits_;
        return it->second;
      }
    }
    // Parse outside the lock: a slow or failing parse does not hold up other threads.
    auto source = std::make_shared<const Source>(chunk.name, chunk.text, chunk.hidden_prefix);
    std::shared_ptr<const Ast> ast = form == ChunkForm::Chunk ? parse_chunk(std::move(source))
                                                              : parse_function_text(std::move(source));
    std::lock_guard<std::mutex> lock(mutex_);
    ++misses_;
    auto [it, inserted] = map_.emplace(key, ast);
    if (inserted) {
      order_.push_back(std::move(key));
      if (order_.size() > kMaxEntries) {
        map_.erase(order_.front());
        order_.pop_front();
      }
    }
    return it->second;
  }

  ParseCacheStats stats() {
    std::lock_guard<std::mutex> lock(mutex_);
    return {hits_, misses_, map_.size()};
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<const Ast>> map_;
  std::deque<std::string> order_;
  std::uint64_t hits_ = 0;
  std::uint64_t misses_ = 0;
};

ParseCache& cache() {
  static ParseCache instance;
  return instance;
}

std::string parameters(int n) { return n == 1 ? "1 parameter" : fmt::format("{} parameters", n); }

}  // namespace

std::shared_ptr<const Ast> parsed_chunk(const Chunk& chunk, ChunkForm form) { return cache().get(chunk, form); }

ParseCacheStats parse_cache_stats() { return cache().stats(); }

std::vector<const FunctionExpr*> functions_at(const Ast& ast, int line_defined, int last_line_defined, int nparams) {
  std::vector<const FunctionExpr*> out;
  for (const FunctionExpr* f : ast.functions())
    if (f->line_defined == line_defined && f->last_line_defined == last_line_defined &&
        (nparams < 0 || f->nparams() == nparams))
      out.push_back(f);
  return out;
}

std::string_view function_text(const Ast& ast, const FunctionExpr& f) {
  const Source& source = ast.source();
  std::size_t begin = source.offset_of(f.loc);
  std::size_t end = std::max(begin, source.offset_of(f.end) + 1);
  return std::string_view(source.text()).substr(begin, end - begin);
}

bool is_function_text(std::string_view text) {
  Source source("", std::string(text));
  Lexer lexer(source);
  Token t;
  try {
    lexer.next(t);
  } catch (const SourceError&) {
    return false;
  }
  return t.type == tok::Function || t.type == tok::Local || t.type == tok::Return;
}

const FunctionExpr& find_function(const Ast& ast, int line_defined, int last_line_defined, int nparams) {
  const FunctionExpr* found = nullptr;
  for (const FunctionExpr* f : functions_at(ast, line_defined, last_line_defined, nparams)) {
    if (found) {
      std::string lines = line_defined == last_line_defined
                              ? fmt::format("line {}", line_defined)
                              : fmt::format("lines {}-{}", line_defined, last_line_defined);
      throw source_error(
          ast.source(), f->loc, error_kind::source,
          fmt::format("two functions with {} are defined on {} (the other at column {}), and luda cannot "
                      "tell which one is meant: put them on separate lines, or pass the kernel's source "
                      "as a string, e.g. cuda.jit([[function(x, out) ... end]])",
                      parameters(f->nparams()), lines, found->loc.col));
    }
    found = f;
  }
  if (!found) {
    std::string what = nparams >= 0 ? " with " + parameters(nparams) : "";
    throw source_error(ast.source().name(), Location{line_defined, 1}, error_kind::source,
                       fmt::format("no function{} is defined on lines {}-{} of this chunk: has the file "
                                   "changed since it was loaded? Reload it, or pass the kernel's source "
                                   "as a string",
                                   what, line_defined, last_line_defined));
  }
  return *found;
}

FoundFunction find_function(const FunctionSource& where) {
  LUDA_DSL_CHECK(where.chunk != nullptr);
  if (where.line_defined == 0) {
    auto ast = parsed_chunk(*where.chunk, ChunkForm::FunctionText);
    LUDA_DSL_CHECK(!ast->functions().empty());
    return {ast, ast->functions().front()};
  }
  auto ast = parsed_chunk(*where.chunk, ChunkForm::Chunk);
  const FunctionExpr& f = find_function(*ast, where.line_defined, where.last_line_defined, where.nparams);
  return {ast, &f};
}

}  // namespace luda::dsl
