--elementwise raw T x, int32 k|T z, float64 w
z = x[i % #x] + k
if z > 0 then w = z end
