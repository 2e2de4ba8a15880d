#!/usr/bin/env python3
"""csv_load.py - load throughput and peak memory of a large numeric CSV file:
ffnn's reader (ffnn_dataset_load_csv through build/libffnn.so by ctypes, 1 and 2
threads) against pandas.read_csv (C engine: float32 columns as ffnn's, and pandas'
default float64) and numpy.loadtxt, in one run, each
load in a fresh process (its peak RSS from /proc/self/status VmHWM, its time
around the call alone), the readers taking turns in every round.

    /usr/bin/python3 bench/csv_load.py [--rows 1000000] [--cols 50] [--repeat 5]
                                       [--dir /tmp] [--skip numpy,pandas,npy]

The file (rows x cols cells: '%.4f' of a standard normal, a header and a last
integer label column) is generated once under --dir (never in the tree), and the
same data as float32/int32 .npy files for ffnn_dataset_load_npy (memory-mapped)
and numpy.load. Every child sums the features it read after its timer stopped
(so every page of a mapped .npy is touched and counted) and prints the sum: the
readers must agree. Prints the machine, the load average before and after each
round, and a markdown table: MB/s of the CSV's size (median over --repeat),
seconds (median, min-max), CPU seconds of the load (all threads), peak RSS of the process and peak RSS added by the
load (VmHWM after minus before), added over the float32 matrix (rows x (cols - 1)
x 4 bytes and the int32 labels), then the reader's targets, each met or not:
ffnn >= pandas and >= 200 MB/s with 2 threads, peak added <= 1.3x the matrix +
64 MB, the mapped .npy <= 1.1x. The thread count is OMP_NUM_THREADS in the child
(the reader's default count; its threads are the library's own pool)."""
import argparse, datetime, json, os, platform, statistics, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
LIB = os.path.join(HERE, "..", "build", "libffnn.so")

CHILD = r'''
import ctypes, json, resource, sys, time
def cpu():  # user + system seconds of this process, every thread
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
def hwm():  # peak RSS of this process image in KiB (VmHWM: reset by exec, unlike ru_maxrss)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
kind, path = sys.argv[1], sys.argv[2]
import numpy
if kind == "ffnn":
    lib = ctypes.CDLL(sys.argv[3])
    lib.ffnn_last_error.restype = ctypes.c_char_p
    lib.ffnn_dataset_count.restype = ctypes.c_size_t
    lib.ffnn_dataset_features.restype = ctypes.c_size_t
    lib.ffnn_dataset_float_features.restype = ctypes.POINTER(ctypes.c_float)
    ds = ctypes.c_void_p()
    base = hwm()
    c, t = cpu(), time.perf_counter()
    if path.endswith(".npy"):
        st = lib.ffnn_dataset_load_npy(path.encode(), path[:-4].encode() + b".labels.npy",
                                       ctypes.byref(ds))
    else:  # NULL options: the defaults (header guessed, the last column the label)
        st = lib.ffnn_dataset_load_csv(path.encode(), None, ctypes.byref(ds))
    dt, dc = time.perf_counter() - t, cpu() - c
    if st != 0:
        sys.exit(lib.ffnn_last_error().decode())
    rows, feats = lib.ffnn_dataset_count(ds), lib.ffnn_dataset_features(ds)
    x = numpy.ctypeslib.as_array(lib.ffnn_dataset_float_features(ds), shape=(rows, feats))
    total = float(x.sum(dtype=numpy.float64))
elif kind.startswith("pandas"):  # pandas: float32 columns; pandas64: its default float64
    import pandas
    base = hwm()
    c, t = cpu(), time.perf_counter()
    df = pandas.read_csv(path, engine="c", dtype="float32" if kind == "pandas" else None)
    dt, dc = time.perf_counter() - t, cpu() - c
    rows = len(df)
    total = sum(float(df[c].to_numpy().sum(dtype=numpy.float64)) for c in df.columns[:-1])
elif path.endswith(".npy"):
    base = hwm()
    c, t = cpu(), time.perf_counter()
    a = numpy.load(path)
    y = numpy.load(path[:-4] + ".labels.npy")
    dt, dc = time.perf_counter() - t, cpu() - c
    rows = a.shape[0]
    total = float(a.sum(dtype=numpy.float64))
else:
    base = hwm()
    c, t = cpu(), time.perf_counter()
    a = numpy.loadtxt(path, delimiter=",", skiprows=1, dtype=numpy.float32)
    dt, dc = time.perf_counter() - t, cpu() - c
    rows = a.shape[0]
    total = float(a[:, :-1].sum(dtype=numpy.float64))
peak = hwm()
print(json.dumps({"seconds": dt, "cpu": dc, "base_kib": base, "peak_kib": peak, "rows": rows,
                  "sum": total}))
'''


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
            block = numpy.loadtxt(f, delimiter=",", max_rows=100000, dtype=numpy.float32)
            x[start:start + len(block)] = block[:, :-1]
            y[start:start + len(block)] = block[:, -1]
    numpy.save(npy_path[:-4] + ".labels.npy", y)
    numpy.save(npy_path, x)


def measure(kind, path, threads, fifo):
    """One load in a fresh process (under SCHED_FIFO with fifo): its JSON line."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    prefix = ["chrt", "-f", "10"] if fifo else []
    p = subprocess.run(prefix + [sys.executable, "-c", CHILD, kind, path, LIB], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        raise SystemExit("%s %s failed: %s" % (kind, path, p.stderr.decode()))
    return json.loads(p.stdout)


def machine():
    model = platform.processor() or "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return "%s, %d cores, %s" % (model, os.cpu_count(), platform.platform())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1000000)
    ap.add_argument("--cols", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--dir", default="/tmp", help="where the generated files go")
    ap.add_argument("--skip", default="", help="comma-separated: numpy,pandas,npy")
    ap.add_argument("--fifo", action="store_true",
                    help="run each load under chrt -f 10 (SCHED_FIFO, root): the idle-machine "
                         "figure on a machine shared with other work, which waits meanwhile")
    a = ap.parse_args()
    skip = set(a.skip.split(","))
    path = os.path.join(a.dir, "ffnn_bench_%dx%d.csv" % (a.rows, a.cols))
    make_file(path, a.rows, a.cols)
    npy = path[:-4] + ".npy"
    if "npy" not in skip:
        make_npy(path, npy, a.rows, a.cols)
    size = os.path.getsize(path)
    matrix = a.rows * (a.cols - 1) * 4 + a.rows * 4
    readers = [("ffnn (1 thread)", "ffnn", 1, path), ("ffnn (2 threads)", "ffnn", 2, path),
               ("pandas read_csv (C engine, float32)", "pandas", 1, path),
               ("pandas read_csv (C engine, default float64/int64)", "pandas64", 1, path),
               ("numpy loadtxt (float32)", "numpy", 1, path),
               ("ffnn .npy (ffnn_dataset_load_npy, mapped)", "ffnn", 1, npy),
               ("numpy.load .npy", "numpy", 1, npy)]
    readers = [r for r in readers if r[1].rstrip("64") not in skip and
               not (r[3] == npy and "npy" in skip)]
    results = {r[0]: [] for r in readers}
    loads = []
    print("date: %s" % datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
    print("machine: %s" % machine())
    print("command: %s %s%s" % (os.path.basename(sys.executable), " ".join(sys.argv),
                                "  (each load under chrt -f 10)" if a.fifo else ""))
    import numpy
    versions = "numpy %s" % numpy.__version__
    if "pandas" not in skip:
        import pandas
        versions += ", pandas %s" % pandas.__version__
    print("versions: %s" % versions)
    for rnd in range(a.repeat):  # the readers take turns: a busy spell hits them alike
        before = os.getloadavg()[0]
        for name, kind, threads, src in readers:
            r = measure(kind, src, threads, a.fifo)
            if r["rows"] != a.rows:
                raise SystemExit("%s read %d rows, expected %d" % (name, r["rows"], a.rows))
            results[name].append(r)
        loads.append((before, os.getloadavg()[0]))
        print("round %d: load average %.2f -> %.2f" % (rnd + 1, *loads[-1]), flush=True)
    sums = {name: rs[0]["sum"] for name, rs in results.items()}
    print("file: %s, %.0f MB, %d x %d; float32 matrix + int32 labels %.0f MiB" %
          (path, size / 1e6, a.rows, a.cols, matrix / 2**20))
    print("feature sums (each reader's own float32 values): " +
          ", ".join("%s %.6g" % (n, s) for n, s in sums.items()))
    print("load average (1 min) over the rounds: median %.2f, %.2f-%.2f" %
          (statistics.median([x for l in loads for x in l]), min(min(l) for l in loads),
           max(max(l) for l in loads)))
    print()
    print("| reader | MB/s (of the CSV's size) | seconds, median of %d (min-max) | CPU seconds "
          "(user + system) | peak RSS, MiB | peak RSS added, MiB | added / matrix |" % a.repeat)
    print("|---|---|---|---|---|---|---|")
    table = {}
    for name, rs in results.items():
        secs = [r["seconds"] for r in rs]
        s = statistics.median(secs)
        peak = max(r["peak_kib"] for r in rs) * 1024
        added = max((r["peak_kib"] - r["base_kib"]) * 1024 for r in rs)
        table[name] = (size / s / 1e6, added)
        cpus = statistics.median(r["cpu"] for r in rs)
        print("| %s | %.0f | %.2f (%.2f-%.2f) | %.2f | %.0f | %.0f | %.2f |" %
              (name, size / s / 1e6, s, min(secs), max(secs), cpus, peak / 2**20,
               added / 2**20, added / matrix))
    print()
    def target(what, ok):
        print("- %s: %s" % (what, "met" if ok else "NOT met"))
    one, two = table.get("ffnn (1 thread)"), table.get("ffnn (2 threads)")
    pds = [table[n] for n in table if n.startswith("pandas")]
    pd = max(pds) if pds else None  # the faster pandas
    if two:
        if pd:
            target("ffnn >= pandas (%.0f vs %.0f MB/s, the faster pandas; ffnn 2 threads, "
                   "%.0f with 1)" % (two[0], pd[0], one[0] if one else float("nan")),
                   two[0] >= pd[0])
        target("ffnn >= 200 MB/s with 2 threads (%.0f)" % two[0], two[0] >= 200)
        lim = 1.3 * matrix + 64e6
        target("ffnn peak RSS added <= 1.3x matrix + 64 MB (%.0f <= %.0f MiB)" %
               (two[1] / 2**20, lim / 2**20), two[1] <= lim)
    m = table.get("ffnn .npy (ffnn_dataset_load_npy, mapped)")
    if m:
        target("mapped .npy peak RSS added <= 1.1x matrix (%.2fx)" % (m[1] / matrix),
               m[1] <= 1.1 * matrix)


if __name__ == "__main__":
    main()
