// Constant folding with the device's semantics: Lua's floor division, modulo and shifts,
// integers wrapping at their type's width, float32 arithmetic rounded to float32. Used by
// inference so that shapes (`{TILE, TILE + 1}`) are known and literals are emitted folded.
#pragma once

#include <optional>
#include <string>

#include "dsl/ast.h"
#include "dsl/types.h"

namespace luda::dsl {

// `a op b`, both already converted to `operand`; the result has type `result` (bool for
// comparisons, the float type for `/` and `^`). nullopt when it is not folded (an error
// the device would meet at run time is left to it, except integer division by zero,
// which sets `error` to Lua's message: "attempt to perform 'n//0'").
std::optional<Constant> fold_binary(BinaryOp op, const Constant& a, const Constant& b, Scalar operand, Scalar result,
                                    std::string* error);
std::optional<Constant> fold_unary(UnaryOp op, const Constant& a, Scalar type);

}  // namespace luda::dsl
