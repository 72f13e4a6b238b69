"""CuPy on bench/graphs.lua's Sobel batches: eager, and as a graph made by stream capture
(cupy.cuda.Graph, CuPy's only way to a graph), timed as luda's are (median of 20 runs,
each waited for). Prints one line per size and "@@ key value" lines for scripts.
    python3 bench/graphs_cupy.py
"""
import cupy as cp

from timing import median_ms  # bench/timing.py


def sobel(image):
    top, middle, bottom = image[:-2, :], image[1:-1, :], image[2:, :]
    left = lambda rows: rows[:, :-2]
    centre = lambda rows: rows[:, 1:-1]
    right = lambda rows: rows[:, 2:]
    gx = (right(top) - left(top)) + 2 * (right(middle) - left(middle)) + (right(bottom) - left(bottom))
    gy = (left(bottom) + 2 * centre(bottom) + right(bottom)) - (left(top) + 2 * centre(top) + right(top))
    return cp.sqrt(gx * gx + gy * gy)


def batch(images):
    return [sobel(image) for image in images]


def main():
    # CuPy's memory pool serves a capture from the blocks an eager run left cached, so the
    # captured graph reuses the same output buffers on every launch (a stream-ordered
    # allocator instead puts alloc nodes in the graph, which cannot be launched again while
    # their memory lives).
    name = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    for count, h, w in [(64, 246, 300), (64, 600, 600)]:
        rng = cp.random.default_rng(7)
        images = [rng.random((h, w), dtype=cp.float32) for _ in range(count)]
        eager = median_ms(lambda: batch(images), cp.cuda.Device().synchronize)
        stream = cp.cuda.Stream(non_blocking=True)
        with stream:
            stream.begin_capture()
            captured = batch(images)
            graph = stream.end_capture()
        graph.launch(stream)
        stream.synchronize()
        reference = batch(images)
        for a, b in zip(captured, reference):
            assert bool(cp.all(a == b)), "the captured graph differs from the eager run"
        replay = median_ms(lambda: graph.launch(stream), stream.synchronize)
        print(f"cupy sobel {count} images of {h}x{w} on {name}: eager {eager:.3f} ms, "
              f"captured graph {replay:.3f} ms ({eager / replay:.2f}x)")
        print(f"@@ cupy_sobel_{h}x{w}_eager_ms {eager:.4f}")
        print(f"@@ cupy_sobel_{h}x{w}_graph_ms {replay:.4f}")


if __name__ == "__main__":
    main()
