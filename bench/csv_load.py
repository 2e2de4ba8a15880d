#!/usr/bin/env python3
"""csv_load.py - load throughput and peak memory of a large numeric CSV file:
ffnn's reader (ffnn_dataset_load_csv through build/libffnn.so, 1 and 2 OpenMP
threads) against pandas.read_csv (C engine) and numpy.loadtxt, in one run, each
load in a fresh process (its peak RSS from wait4, its time around the call).

    /usr/bin/python3 bench/csv_load.py [--rows 1000000] [--cols 50] [--repeat 3]

The file (rows x cols float cells, '%.4f' of a standard normal, a header and a
last integer label column) is generated once under /tmp, and the same data as
float32/int32 .npy files for ffnn_dataset_load_npy and numpy.load. Prints a markdown
table: MB/s of the file, wall seconds (median of --repeat), peak RSS, and RSS
over the float32 matrix (rows x cols x 4 bytes)."""
import argparse, os, subprocess, sys, time, statistics, json

HERE = os.path.dirname(os.path.abspath(__file__))
LIB = os.path.join(HERE, "..", "build", "libffnn.so")

CHILD = r'''
import ctypes, json, os, resource, sys, time
def hwm():  # peak RSS of this process image in KiB (VmHWM: reset by exec, unlike ru_maxrss)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
kind, path = sys.argv[1], sys.argv[2]
if kind == "ffnn":
    lib = ctypes.CDLL(sys.argv[3])
    class Opts(ctypes.Structure):
        _fields_ = [("header", ctypes.c_int), ("delimiter", ctypes.c_char),
                    ("target", ctypes.c_char_p), ("features", ctypes.c_char_p),
                    ("regression", ctypes.c_int), ("skip_rows", ctypes.c_size_t),
                    ("class_names", ctypes.c_void_p), ("class_count", ctypes.c_int),
                    ("ignore", ctypes.c_char_p), ("categorical", ctypes.c_char_p),
                    ("text_categories", ctypes.c_int), ("missing", ctypes.c_int),
                    ("na_values", ctypes.c_char_p), ("drop_missing_target", ctypes.c_int)]
    lib.ffnn_csv_options_default.restype = Opts
    lib.ffnn_last_error.restype = ctypes.c_char_p
    o = lib.ffnn_csv_options_default()
    ds = ctypes.c_void_p()
    base = hwm()
    t = time.perf_counter()
    if path.endswith(".npy"):
        st = lib.ffnn_dataset_load_npy(path.encode(), path[:-4].encode() + b".labels.npy",
                                       ctypes.byref(ds))
    else:
        st = lib.ffnn_dataset_load_csv(path.encode(), ctypes.byref(o), ctypes.byref(ds))
    dt = time.perf_counter() - t
    if st != 0:
        sys.exit(lib.ffnn_last_error().decode())
    lib.ffnn_dataset_count.restype = ctypes.c_size_t
    rows = lib.ffnn_dataset_count(ds)
elif kind == "pandas":
    import pandas
    base = hwm()
    t = time.perf_counter()
    df = pandas.read_csv(path, engine="c", dtype="float32")
    dt = time.perf_counter() - t
    rows = len(df)
elif path.endswith(".npy"):
    import numpy
    base = hwm()
    t = time.perf_counter()
    a = numpy.load(path)
    y = numpy.load(path[:-4] + ".labels.npy")
    dt = time.perf_counter() - t
    rows = a.shape[0]
else:
    import numpy
    base = hwm()
    t = time.perf_counter()
    a = numpy.loadtxt(path, delimiter=",", skiprows=1, dtype=numpy.float32)
    dt = time.perf_counter() - t
    rows = a.shape[0]
peak = hwm()
print(json.dumps({"seconds": dt, "base_kib": base, "peak_kib": peak, "rows": rows}))
'''


def make_npy(csv_path, npy_path, rows, cols):
    """The same numbers as float32 features and int32 labels (.npy), once."""
    import numpy
    if os.path.exists(npy_path):
        return
    x = numpy.empty((rows, cols - 1), numpy.float32)
    y = numpy.empty(rows, numpy.int32)
    with open(csv_path) as f:
        f.readline()
        for start in range(0, rows, 100000):
            block = numpy.loadtxt(f, delimiter=",", max_rows=100000, dtype=numpy.float64)
            x[start:start + len(block)] = block[:, :-1]
            y[start:start + len(block)] = block[:, -1]
    numpy.save(npy_path[:-4] + ".labels.npy", y)
    numpy.save(npy_path, x)


def make_file(path, rows, cols):
    import numpy
    if os.path.exists(path):
        return
    rng = numpy.random.default_rng(0)
    tmp = path + ".part"
    with open(tmp, "w") as f:
        f.write(",".join("x%d" % j for j in range(cols - 1)) + ",label\n")
        for start in range(0, rows, 100000):
            n = min(100000, rows - start)
            x = rng.standard_normal((n, cols - 1))
            y = rng.integers(0, 10, size=(n, 1))
            numpy.savetxt(f, numpy.hstack([x, y]), fmt=["%.4f"] * (cols - 1) + ["%d"],
                          delimiter=",")
    os.rename(tmp, path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1000000)
    ap.add_argument("--cols", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip", default="", help="comma-separated: numpy,pandas,npy")
    a = ap.parse_args()
    path = "/tmp/ffnn_bench_%dx%d.csv" % (a.rows, a.cols)
    make_file(path, a.rows, a.cols)
    size = os.path.getsize(path)
    matrix = a.rows * (a.cols - 1) * 4 + a.rows * 4
    npy = path[:-4] + ".npy"
    if "npy" not in a.skip.split(","):
        make_npy(path, npy, a.rows, a.cols)
    runs = [("ffnn", 1, path), ("ffnn", 2, path), ("pandas", 1, path), ("numpy", 1, path),
            ("ffnn", 1, npy), ("numpy", 1, npy)]
    rows = []
    for kind, threads, src in runs:
        if kind in a.skip.split(",") or (src == npy and "npy" in a.skip.split(",")):
            continue
        secs, peaks = [], []
        for _ in range(a.repeat):
            r, peak = measure(kind, src, threads)
            secs.append(r["seconds"])
            peaks.append(peak - r["base_kib"] * 1024)
        s = statistics.median(secs)
        pk = max(peaks)
        assert r["rows"] == a.rows, "%s read %d rows" % (kind, r["rows"])
        name = kind if kind != "ffnn" else "ffnn (%d thread%s)" % (threads, "s" * (threads > 1))
        if src == npy:
            name = {"ffnn": "ffnn .npy (ffnn_dataset_load_npy)", "numpy": "numpy.load .npy"}[kind]
        rows.append((name, size / s / 1e6, s, pk / 2**20, pk / matrix))
    print("file: %s, %.0f MB, %d x %d; float32 matrix %.0f MiB" % (path, size / 1e6, a.rows,
          a.cols, matrix / 2**20))
    print("(MB/s: of the CSV file's size, also for the .npy rows: the same data)")
    print("| reader | MB/s | seconds (median of %d) | peak RSS added, MiB | x matrix |" % a.repeat)
    print("|---|---|---|---|---|")
    for name, mbs, s, pk, ratio in rows:
        print("| %s | %.0f | %.2f | %.0f | %.2f |" % (name, mbs, s, pk, ratio))


def measure(kind, path, threads):
    """One load in a fresh process: its result and its peak RSS in bytes (its own
    VmHWM after the load)."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_WAIT_POLICY="passive")
    p = subprocess.Popen([sys.executable, "-c", CHILD, kind, path, LIB], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = p.stdout.read()
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        raise SystemExit("%s failed: %s" % (kind, err.decode()))
    r = json.loads(out)
    return r, r["peak_kib"] * 1024


if __name__ == "__main__":
    main()
