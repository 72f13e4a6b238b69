// NumPy 2's printing of arrays (numpy.array_repr / numpy.array_str with legacy off and
// floatmode 'maxprec'), and of scalars as NumPy's str of a scalar.
#pragma once

#include <string>
#include <string_view>

#include "runtime/dtype.h"
#include "runtime/ndarray.h"

namespace luda {

// "array([[0., 1.],\n       [2., 3.]], dtype=float32)"; a device array prints the same
// (only its elements shown are copied to the host when it is elided).
std::string format_repr(const NDArray& a, const PrintOptions& options = {});
// "[[0. 1.]\n [2. 3.]]"; a 0-d array prints as its scalar.
std::string format_str(const NDArray& a, const PrintOptions& options = {});
// NumPy's str of a scalar: "3.5", "1.0", "1e-05", "1.5e+20", "nan", "-7", "True".
std::string format_scalar(const Scalar& s);

// A user's text as an error message shows it: control bytes as a Lua string literal
// writes them ("1\0:2", "a\nb"), so that every byte shows and none ends the message (a
// C string stops at "\0").
std::string printable(std::string_view text);

}  // namespace luda
