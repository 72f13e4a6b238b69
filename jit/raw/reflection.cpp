#include "jit/raw/reflection.h"

#include <cxxabi.h>

#include <cctype>
#include <cstdlib>
#include <memory>

#include <fmt/format.h>

namespace luda::jit {
namespace {

// A parameter's code: its dtype + 1 in the low byte (0: none), kPointer for a pointer (the
// dtype is then the pointee's), kConst for a const pointee. ORDER CODES: read_reflection.
constexpr int kPointer = 0x100, kConst = 0x200;
int code_of(DType t) { return static_cast<int>(t) + 1; }

// The C types with a dtype, as the templates name them; `char`, `long` and `unsigned long`
// are decided by the compiler that reads them (char's sign, long's width).
std::string scalar_codes() {
  struct Row {
    const char* c_type;
    std::string code;
  };
  auto n = [](DType t) { return std::to_string(code_of(t)); };
  const Row rows[] = {
      {"bool", n(DType::Bool)},
      {"signed char", n(DType::Int8)},
      {"unsigned char", n(DType::UInt8)},
      {"char", fmt::format("((char)-1 < 0 ? {} : {})", n(DType::Int8), n(DType::UInt8))},
      {"short", n(DType::Int16)},
      {"unsigned short", n(DType::UInt16)},
      {"int", n(DType::Int32)},
      {"unsigned int", n(DType::UInt32)},
      {"long", fmt::format("(sizeof(long) == 8 ? {} : {})", n(DType::Int64), n(DType::Int32))},
      {"unsigned long", fmt::format("(sizeof(long) == 8 ? {} : {})", n(DType::UInt64), n(DType::UInt32))},
      {"long long", n(DType::Int64)},
      {"unsigned long long", n(DType::UInt64)},
      {"float", n(DType::Float32)},
      {"double", n(DType::Float64)},
  };
  std::string out;
  for (const Row& r : rows)
    out += fmt::format("template <> struct luda_r_scalar<{}> {{ enum {{ code = {} }}; }};\n", r.c_type, r.code);
  return out;
}

// The parameters of the function type in `text` ("void (*)(float const*, int)"), split at
// their top-level commas; nullopt when `text` has no parameter list.
std::optional<std::vector<std::string>> parameter_spellings(std::string_view text) {
  std::size_t open = text.find("(*)(");
  if (open == std::string_view::npos) return std::nullopt;
  std::vector<std::string> out;
  std::string piece;
  int depth = 0;
  for (std::size_t i = open + 4; i < text.size(); ++i) {
    char c = text[i];
    if (c == '(' || c == '<' || c == '[') ++depth;
    if (c == ')' || c == '>' || c == ']') {
      if (depth == 0) {  // the list's own ')'
        if (!piece.empty() || !out.empty()) out.push_back(piece);
        return out;
      }
      --depth;
    }
    if (c == ',' && depth == 0) {
      out.push_back(piece);
      piece.clear();
      continue;
    }
    if (c == ' ' && piece.empty()) continue;
    piece += c;
  }
  return std::nullopt;
}

// The demangler's "float const*" as most sources write it: "const float*".
std::string west_const(std::string s) {
  constexpr std::string_view tail = " const*";
  if (s.size() > tail.size() && s.ends_with(tail) && s.find_first_of("*&<([") == s.size() - 1)
    return "const " + s.substr(0, s.size() - tail.size()) + "*";
  return s;
}

}  // namespace

bool names_luda_types(std::string_view source) {
  auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (std::string_view name : {"luda_half", "luda_bfloat16", "luda_complex64", "luda_complex128"}) {
    for (std::size_t at = source.find(name); at != std::string_view::npos; at = source.find(name, at + 1)) {
      const std::size_t end = at + name.size();
      if ((at == 0 || !word_char(source[at - 1])) && (end == source.size() || !word_char(source[end]))) return true;
    }
  }
  return false;
}

std::string reflection_support(bool cpu, bool luda_types) {
  std::string out = "\n#line 1 \"luda_reflection\"\n";
  out += "template <class luda_T> struct luda_r_scalar { enum { code = 0 }; };\n";
  out += scalar_codes();
  auto row = [&](std::string_view c_type, DType t) {
    out += fmt::format("template <> struct luda_r_scalar<{}> {{ enum {{ code = {} }}; }};\n", c_type, code_of(t));
  };
  if (luda_types) {
    row("luda_half", DType::Float16);
    row("luda_bfloat16", DType::BFloat16);
    row("luda_complex64", DType::Complex64);
    row("luda_complex128", DType::Complex128);
  }
  if (!cpu) {
    out += "#ifdef __CUDA_FP16_TYPES_EXIST__\n";
    row("__half", DType::Float16);
    out += "#endif\n#ifdef __CUDA_BF16_TYPES_EXIST__\n";
    row("__nv_bfloat16", DType::BFloat16);
    out += "#endif\n";
  }
  out +=
      fmt::format(R"(template <class luda_T> struct luda_r_pointee {{ typedef luda_T type; enum {{ flags = {0} }}; }};
template <class luda_T> struct luda_r_pointee<const luda_T> {{ typedef luda_T type; enum {{ flags = {0} | {1} }}; }};
template <class luda_T> struct luda_r_pointee<volatile luda_T> {{ typedef luda_T type; enum {{ flags = {0} }}; }};
template <class luda_T> struct luda_r_pointee<const volatile luda_T> {{ typedef luda_T type; enum {{ flags = {0} | {1} }}; }};
template <class luda_T> struct luda_r_param {{ enum {{ code = luda_r_scalar<luda_T>::code }}; }};
template <class luda_T> struct luda_r_param<luda_T*> {{
  enum {{ code = luda_r_pointee<luda_T>::flags | luda_r_scalar<typename luda_r_pointee<luda_T>::type>::code }};
}};
template <int... luda_C> struct luda_r_codes {{}};
template <class luda_F> struct luda_r_list {{ typedef luda_r_codes<-1> type; }};
template <class... luda_P> struct luda_r_list<void (*)(luda_P...)> {{ typedef luda_r_codes<luda_r_param<luda_P>::code...> type; }};
)",
                  kPointer, kConst);
  if (!cpu) {
    out += "template <class luda_C, class luda_F> __global__ void luda_r_probe() {}\n";
    return out;
  }
  out += R"(template <class luda_C, class luda_F> struct luda_r_probe {};
template <unsigned long... luda_I> struct luda_r_seq {};
template <unsigned long luda_N, unsigned long... luda_I> struct luda_r_make_seq : luda_r_make_seq<luda_N - 1, luda_N - 1, luda_I...> {};
template <unsigned long... luda_I> struct luda_r_make_seq<0, luda_I...> { typedef luda_r_seq<luda_I...> type; };
// A kernel called with each argument slot read as its parameter's type.
template <class luda_F> struct luda_r_call;
template <class... luda_P> struct luda_r_call<void (*)(luda_P...)> {
  template <unsigned long... luda_I> static void run(void (*k)(luda_P...), void* const* a, luda_r_seq<luda_I...>) { (void)a; k(*(luda_P*)a[luda_I]...); }
  static void call(void (*k)(luda_P...), void* const* a) { run(k, a, typename luda_r_make_seq<sizeof...(luda_P)>::type()); }
};
)";
  return out;
}

std::string reflection_expression(std::string_view kernel) {
  return fmt::format("luda_r_probe<luda_r_list<decltype(&{0})>::type, decltype(&{0})>", kernel);
}

std::string cpu_reflection_entry(std::string_view kernel, std::string_view entry) {
  // An exception leaving the kernel ends it with an error that says what was thrown; the
  // catch is left before the kernel is ended (the runtime's fail does not return).
  return fmt::format(
      "LUDA_CPU_EXPORT const char* {1}_reflection() {{\n"
      "  return typeid(luda_r_probe<luda_r_list<decltype(&{0})>::type, decltype(&{0})>).name();\n"
      "}}\n"
      "LUDA_CPU_EXPORT void {1}_cpu(void* const* luda_args) {{\n"
      "  char luda_what[384];\n"
      "  bool luda_threw = false;\n"
      "  try {{ luda_r_call<decltype(&{0})>::call(&{0}, luda_args); }}\n"
      "  catch (...) {{ luda_cpu_describe_exception(luda_what, sizeof luda_what); luda_threw = true; }}\n"
      "  if (luda_threw) luda_cpu_fail(luda_what);\n"
      "}}\n",
      kernel, entry);
}

std::optional<std::vector<ParamType>> read_reflection(std::string_view mangled) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> demangled(abi::__cxa_demangle(std::string(mangled).c_str(), nullptr,
                                                                            nullptr, &status),
                                                        &std::free);
  if (status != 0 || !demangled) return std::nullopt;
  std::string_view text = demangled.get();
  constexpr std::string_view kCodes = "luda_r_codes<";
  std::size_t at = text.find(kCodes);
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t close = text.find('>', at);
  if (close == std::string_view::npos) return std::nullopt;
  std::vector<int> codes;
  for (std::size_t i = at + kCodes.size(); i < close;) {
    while (i < close && (text[i] == ' ' || text[i] == ',')) ++i;
    if (i == close) break;
    if (text[i] < '0' || text[i] > '9') return std::nullopt;  // -1: not a plain function
    int v = 0;
    while (i < close && text[i] >= '0' && text[i] <= '9') v = v * 10 + (text[i++] - '0');
    codes.push_back(v);
  }
  std::optional<std::vector<std::string>> spellings = parameter_spellings(text.substr(close));
  if (!spellings || spellings->size() != codes.size()) return std::nullopt;
  std::vector<ParamType> out;
  for (std::size_t k = 0; k < codes.size(); ++k) {
    int code = codes[k], d = code & 0xff;
    ParamType t;
    t.spelling = west_const((*spellings)[k]);
    if (d > 0 && d <= kNumDTypes) t.dtype = static_cast<DType>(d - 1);
    if (code & kPointer) {
      t.kind = ParamType::Kind::Pointer;
      t.is_const = (code & kConst) != 0;
    } else {
      t.kind = t.dtype ? ParamType::Kind::Scalar : ParamType::Kind::Opaque;
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace luda::jit
