--elementwise T x|T x
x = x + 1
