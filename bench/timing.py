"""The peers' timing in bench/*.py, as luda's bench scripts time: one warm-up run, then the
median of `reps` runs (the lower one of an even count, as bench/*.lua take it), each
waited for with `sync`, in milliseconds."""
import time


def median_ms(fn, sync, reps=20):
    fn()
    sync()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return times[(reps + 1) // 2 - 1]
