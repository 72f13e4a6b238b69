// The Lua text of the kernel kinds that are given as strings (CuPy's ElementwiseKernel and
// ReductionKernel, in Lua): parameter strings parsed by the real lexer, and the scalar
// functions built from a body or expressions, which compile_device_function then types.
// Every error is a SourceError located in the string the user wrote, column included.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dsl/compile.h"
#include "dsl/source.h"
#include "dsl/types.h"

namespace luda::dsl {
class Ast;
struct CallExpr;
struct FunctionExpr;
}  // namespace luda::dsl

namespace luda::dsl {

// One parameter of "T x, raw T y, float32 z".
struct KindParam {
  std::string name;
  bool raw = false;             // `raw`: passed whole as an array, indexed freely (in_params only)
  std::optional<Scalar> dtype;  // a concrete dtype ("float32")
  std::string placeholder;      // else a one-letter type placeholder ("T"), bound at call
  int col = 0;                  // 1-based column of the name in the string
};

// What a parameter string is, for its errors' location: "in_params", "out_params".
// Errors (SourceError, chunk `<role> of <kind> '<name>'`, line 1, the column):
//   - a dtype that does not exist: "unknown type 'flaot32': expected a dtype (float32,
//     int64, ...) or a one-letter type placeholder (T)";
//   - a missing name, a stray token, an empty parameter;
//   - a duplicate name, `raw` in out_params, a reserved name (i, n, luda; a, b and _j for
//     reductions; Lua keywords).
// `taken` (out_params: the parsed in_params): names that are already parameters.
std::vector<KindParam> parse_kind_params(std::string_view text, std::string_view role, std::string_view kind,
                                         std::string_view name, bool reduction,
                                         const std::vector<KindParam>* taken = nullptr);

// Both parameter strings of a kind, in_params then out_params: a name in both is an error
// in out_params (one name would stand for two parameters of the element function: CuPy
// refuses it too).
struct KindParams {
  std::vector<KindParam> in, out;
};
KindParams parse_kind_signature(std::string_view in_params, std::string_view out_params, std::string_view kind,
                                std::string_view name, bool reduction);

// The element function of an elementwise kernel, for one binding of its placeholders:
//   function(<in params>, <raw out params>, <read out params>, i, n)
//     local <unread out> = <its dtype>(0) ...
//     <body>
//     return <out params that are not raw>
//   end
// The body keeps its own line numbers and columns (the chunk is named `elementwise
// '<name>'`; the generated head is a hidden prefix of line 1, dsl/source.h); raw params,
// inputs and outputs, are arrays that the body indexes (`y[i] = x`); out params the body
// reads before assigning, or may leave unassigned (only a top-level `z = ...` surely
// assigns; CuPy then keeps the output's value), are passed in (their current value:
// out_read, never set for a raw one). `types[k]` is param k's dtype (ins then outs).
// The body is parsed here: its syntax errors, and a `return` in it, are SourceErrors.
struct ElementwiseFunction {
  FunctionSource function;
  std::vector<bool> out_read;  // per out param
};
ElementwiseFunction elementwise_function(const std::vector<KindParam>& in, const std::vector<KindParam>& out,
                                         const std::vector<Scalar>& types, std::string_view body,
                                         std::string_view name);

// The four functions of a reduction kernel, for one binding of its placeholders:
//   map(<in params>, _j) -> reduce_type      `_j`: the 0-based index within the reduced axes
//   reduce(a, b) -> reduce_type
//   post(a, <scalar in params>) -> <out params>   (statements assigning the out params)
//   identity() -> reduce_type
// Each chunk is named `reduction '<name>' <part>` (part: map, reduce, post, identity) and
// keeps the string's lines and columns. The map, reduce and identity values are converted
// to reduce_type (luda.<type>(...); a bool reduce_type takes them as they are). The
// strings are parsed here: syntax errors, not one expression, `return` in post_map.
struct ReductionFunctions {
  FunctionSource map, reduce, post, identity;
  std::vector<int> post_inputs;  // which in params post() takes (indices into `in`)
};
ReductionFunctions reduction_functions(const std::vector<KindParam>& in, const std::vector<KindParam>& out,
                                       const std::vector<Scalar>& types, Scalar reduce_type,
                                       const std::vector<bool>& in_is_scalar, std::string_view map_expr,
                                       std::string_view reduce_expr, std::string_view post_map_expr,
                                       std::string_view identity, std::string_view name);

// The shape of a fused function: elementwise only, or elementwise work then a final
// `return` whose values are reductions (`luda.sum(e [, axis])`, max, min, prod; the axis a
// literal integer or table of them, 1-based, negative from the end) combined by
// elementwise work on the reduced values: `return luda.sum(x * w) / luda.sum(w)`,
// `return luda.sum(x, 2) * 2 + 1`, `return luda.sum(x), luda.max(x)`. Every reduction
// reduces the same axes: one reduction kernel carries one accumulator per reduction and
// applies the work after them (post) to each output element.
// Errors (SourceErrors at the construct): a reduction anywhere but the final return, one
// inside another's argument, more than kMaxFusedReductions, reductions over different
// axes, a non-literal axis, a local of the function used after the reductions.
//
// The most reductions one fused function carries: 16 accumulators of 8 bytes fill 32 KiB
// of shared memory in the Columns reduction template.
inline constexpr int kMaxFusedReductions = 16;

struct FuseShape {
  bool reduction = false;
  std::vector<std::string> ops;  // "sum", "max", "min", "prod": each reduction, in source order
  std::vector<int> axes;         // as written (empty: all axes)
  bool axis_given = false;
  int nresults = 1;  // the return's values: the outputs
  // Work after the reductions, when the return is more than one bare reduction: the
  // return's values with reduction k replaced by the name `luda_r<k+1>` (padded to the
  // call's length, line breaks kept), placed after a one-line head (fuse_post_function)
  // at the lines and columns the user wrote them. Empty: the value is the reduction's.
  std::string post_text;
  // The parameters (0-based) the post work reads besides the reductions, in all and per
  // value of the return. One that is not a Lua number at the call (`x - luda.max(x)`)
  // meets every element: the function then runs in two passes (the reductions, then the
  // whole function elementwise over the inputs and their values).
  std::vector<int> post_params;
  std::vector<std::vector<int>> value_params;
  // The whole function for the second pass: its body after a blanked header, each
  // reduction a name as in post_text, at the user's lines and columns, through its `end`
  // (fuse_second_pass_function puts the header before it).
  std::string body_text;
};
FuseShape analyze_fuse(const FunctionSource& function);

// The post work as a function of the reduced values then `scalar_params` (the fused
// function's parameters passed as Lua numbers at this call), in the user's chunk:
//   function(luda_r1, ..., luda_rk, <scalar params>) return <post_text> end
FunctionSource fuse_post_function(const FunctionSource& function, const FuseShape& shape,
                                  const std::vector<std::string>& scalar_params);

// The second pass of a two-pass fused function: the function elementwise, each reduction's
// value (broadcast back over the reduced axes) an extra parameter, in the user's chunk:
//   function(<params>, luda_r1, ..., luda_rk) <body_text>
FunctionSource fuse_second_pass_function(const FunctionSource& function, const FuseShape& shape,
                                         const std::vector<std::string>& params);

// The reduction calls of a fused function's final return, in source order (empty when the
// function has no reduction). analyze_fuse has checked the shape.
std::vector<const CallExpr*> fuse_reduction_calls(const Ast& ast, const FunctionExpr& function);

}  // namespace luda::dsl
