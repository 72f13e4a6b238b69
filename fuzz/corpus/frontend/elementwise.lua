--elementwise T x, T y|T z
z = x * y + i
