/*
 * local1d.c - `ffnn bench local1d` (alias seed002): reproduces report 002
 * (../shared/seeds/002_*.txt: 1-D locally connected layers). A network of K 1-D
 * locally connected layers (R = 3, sigmoid fused, batch 1) is run forward on
 *   - cuda, variants global and shared (src/backend/cuda/local1d.cu), one launch per
 *     layer ("stream")
 *     and the same launches captured once in a CUDA graph ("graph");
 *   - OpenMP on this machine's CPU: strong scaling (fixed N, 1..16 threads) and weak
 *     scaling (N proportional to the threads).
 * Two weight regimes: "unique" (every layer its own weights, the memory-bound case of
 * the seed) and "reused" (one weight set that every layer uses; it stays in L2).
 *
 * Layer shape: valid padding, as the seed's throughput formula: layer k (k = 1..K)
 * maps width N - (k-1)(R-1) to N - k(R-1); outputs of a pass = sum_k (N - k(R-1)),
 * counted in 64 bits. The forward driver swaps two activation buffers (layer 0 reads
 * the input x0, layer k writes buf[k % 2]) and copies nothing, so every pass computes
 * the same function of x0.
 *
 * Byte model (bytes that must cross device memory per output):
 *   unique: R weights + bias + one input + one output = 4 (R + 1) + 8 = 24 B for R = 3
 *   reused: one input + one output = 8 B (weights and bias come from L2)
 * % of the copy ceiling = (outputs * bytes per output / seconds) / ceiling, where the
 * ceiling is a device-to-device cudaMemcpy (bytes read + written) measured first.
 *
 * Every configuration is checked before it is timed (ffnn_lab_check, lab/harness.h):
 * its first min(3, K) layers against
 * ffnn_cpu_local1d_forward (outputs poisoned with NaN first), then the full K-layer pass
 * (the last layer recomputed on the CPU from the pass's own input to it, every output
 * finite and in [0, 1]); after timing the final output must be the same bits again.
 * Inputs U(0, 1), weights and biases U(-0.5, 0.5) (|z| <= 2: sigmoid far from
 * saturation), never zeros.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/local1d.h"
#include "ffnn.h"
#include "harness.h"
#include "suites.h"

#define MAX_LIST 32
#define CHECK_TOL 1e-5         /* max |out - reference| (outputs are in (0, 1))   */
#define SEED_L40_OUTPUTS 1.58e11 /* the seed's CUDA shared kernel, N = 2^21, K = 1000 */

static const char *usage =
    "usage: ffnn bench local1d [options]\n"
    "\n"
    "Report 002: forward through K 1-D locally connected layers (R weights per output,\n"
    "no sharing; valid padding: each layer is R-1 narrower; sigmoid fused; batch 1) on\n"
    "cuda (variants global and shared; one launch per layer, and the same captured in a\n"
    "CUDA graph) and OpenMP on this machine's CPU (strong and weak scaling), with unique\n"
    "weights per layer and with one weight set reused by every layer. Prints and writes\n"
    "DIR/local1d.csv and DIR/local1d_table.md: seconds (median), outputs/s, bytes/s\n"
    "(unique: 4(R+1)+8 = 24 B per output for R = 3; reused: 8 B) and % of the device's\n"
    "copy ceiling (device-to-device cudaMemcpy, measured first). Every configuration is\n"
    "checked against the CPU reference before it is timed. Configurations whose weights\n"
    "do not fit in free GPU memory are listed as skipped with the bytes they need.\n"
    "\n"
    "options:\n"
    "  --quick             a smoke run: N = 2^12, 2^14; K = 10, 50; CPU N = 2^16 (weak:\n"
    "                      2^14 per thread), K = 10; default --out build/bench-quick\n"
    "  --out DIR           where the CSV and the table go (default build/bench)\n"
    "  --max-seconds S     start no configuration after S seconds; the rest are listed\n"
    "                      as skipped (default 240; --quick 120)\n"
    "  --n-log2 LIST       GPU input widths as powers of two (default 17,18,19,20,21)\n"
    "  --k LIST            GPU layer counts (default 1000,2000,4000)\n"
    "  --r R               outputs' receptive field, odd (default 3)\n"
    "  --repeats N         timed GPU passes per configuration, after one warm-up; the\n"
    "                      median is reported (default 5, at least 3)\n"
    "  --regimes LIST      unique,reused (default both)\n"
    "  --variants LIST     global,shared (default both)\n"
    "  --launch LIST       stream,graph (default both)\n"
    "  --copy-mib M        size of the copy-ceiling buffer in MiB (default 2048)\n"
    "  --cpu-threads LIST  OpenMP thread counts (default 1,2,4,... up to the CPUs here)\n"
    "  --cpu-k K           layers of the OpenMP runs (default 300)\n"
    "  --cpu-n-log2 E      strong scaling: N = 2^E (default 20)\n"
    "  --cpu-weak-n-log2 E weak scaling: N = 2^E per thread (default 16)\n"
    "  --cpu-repeats N     timed CPU passes, after one warm-up (default 3)\n"
    "  --no-gpu            skip the GPU part\n"
    "  --no-cpu            skip the OpenMP part\n"
    "  --seed N            seed of the random inputs and weights (default 2)\n"
    "  -h, --help          this help\n";

/* ------------------------------------------------------------ options */

typedef struct options {
    int quick;
    const char *out;
    double max_seconds;
    int threads[MAX_LIST], n_threads;
    int nlog2[MAX_LIST], n_nlog2;
    int ks[MAX_LIST], n_ks;
    int R;
    int repeats, cpu_repeats;
    int cpu_k, cpu_nlog2, cpu_weak_nlog2;
    int gpu, cpu;
    int regime[2];  /* unique, reused */
    int variant[2]; /* global, shared */
    int launch[2];  /* stream, graph  */
    double copy_mib;
    int seed;
} options;

/* two of each, NULL-terminated for the option parser */
static const char *const regime_names[] = {"unique", "reused", NULL};
static const char *const variant_names[] = {"global", "shared", NULL};
static const char *const launch_names[] = {"stream", "graph", NULL};

/* ------------------------------------------------------------ result rows */

typedef struct row {
    const char *part;    /* copy | gpu | omp_strong | omp_weak */
    const char *variant; /* memcpy | global | shared | omp      */
    const char *launch;  /* stream | graph | ""                 */
    const char *regime;  /* unique | reused | ""                */
    uint64_t N;
    int K, R, threads;
    uint64_t outputs;       /* per pass                                     */
    double bytes_per_output;
    double sec, sec_min, sec_max;
    double outputs_per_s, bytes_per_s, pct; /* pct: of the copy ceiling           */
    double scaling;                         /* omp: T(first thread count) / T     */
    double err;                             /* max |out - reference|               */
    double bytes_needed;                    /* memory the configuration needs      */
    char status[320];                       /* ok | skipped: why | failed: why     */
    char device[160];
} row;

typedef struct gpu_summary {
    int ran;
    char name[256];
    double ceiling;
    ffnn_lab_gpu_info info;
} gpu_summary;

typedef struct cpu_summary {
    int ran;
    const char *name;
} cpu_summary;

/* One run of the suite. */
typedef struct local1d_suite {
    ffnn_bench_run run;
    options o;
    gpu_summary gs;
    cpu_summary cs;
    int gpu_dead; /* a sticky CUDA error: the context is unusable */
} local1d_suite;

static row *new_row(local1d_suite *s, const char *part, const char *variant, const char *launch,
                    const char *regime, const char *device)
{
    row *r = ffnn_bench_add_row(&s->run);
    r->part = part;
    r->variant = variant;
    r->launch = launch;
    r->regime = regime;
    r->sec = r->sec_min = r->sec_max = NAN;
    r->outputs_per_s = r->bytes_per_s = r->pct = r->scaling = r->err = NAN;
    r->bytes_per_output = r->bytes_needed = NAN;
    snprintf(r->device, sizeof r->device, "%.*s", (int)sizeof r->device - 1, device);
    return r;
}

static const row *row_at(const local1d_suite *s, size_t i) { return FFNN_BENCH_ROW(&s->run, row, i); }

static void set_rates(row *r, double ceiling)
{
    if (!(r->sec > 0.0)) return;
    r->outputs_per_s = ffnn_lab_rate((double)r->outputs, r->sec);
    r->bytes_per_s = ffnn_lab_rate((double)r->outputs * r->bytes_per_output, r->sec);
    if (ceiling > 0.0) r->pct = ffnn_lab_pct(r->bytes_per_s, ceiling);
}

/* ------------------------------------------------------------ layer geometry */

/* Output width of layer k (0-based): N - (k+1)(R-1). */
static size_t out_width(size_t N, size_t R, int k) { return N - (size_t)(k + 1) * (R - 1); }

/* Outputs of layers 0..k-1: k N - (R-1) k (k+1) / 2. Also the row offset of layer k in
 * the unique-weights arenas (W: R floats per row, bias: 1). */
static uint64_t prefix_outputs(size_t N, size_t R, int k)
{
    uint64_t kk = (uint64_t)k;
    return kk * (uint64_t)N - (uint64_t)(R - 1) * kk * (kk + 1) / 2;
}

static double bytes_per_output(size_t R, int reused)
{
    return reused ? 8.0 : 4.0 * (double)(R + 1) + 8.0;
}

/* Floats of the weight and bias arenas for K layers. */
static uint64_t w_floats(size_t N, size_t R, int K, int reused)
{
    return (uint64_t)R * (reused ? (uint64_t)out_width(N, R, 0) : prefix_outputs(N, R, K));
}
static uint64_t b_floats(size_t N, size_t R, int K, int reused)
{
    return reused ? (uint64_t)out_width(N, R, 0) : prefix_outputs(N, R, K);
}

/* x0 + two activation buffers + weights + biases. */
static double bytes_needed(size_t N, size_t R, int K, int reused)
{
    return 4.0 * (3.0 * (double)N + (double)w_floats(N, R, K, reused) +
                  (double)b_floats(N, R, K, reused));
}

static int valid_depth(size_t N, size_t R, int K) { return (uint64_t)K * (R - 1) < N; }

/* ------------------------------------------------------------ checks */

/* got vs ref over n outputs: every value finite and in [0, 1], max |got - ref| within
 * CHECK_TOL. Returns 0 (*err: the largest difference so far) or -1 with the first bad
 * element in why. */
static int compare_outputs(const float *got, const float *ref, size_t n, double *err,
                           const char *what, char *why, size_t why_size)
{
    const ffnn_lab_tolerance tol = {CHECK_TOL, 0.0, 0.0, 1.0};
    ffnn_lab_check_result res;
    if (ffnn_lab_check(what, got, ref, NULL, n, &tol, &res) != 0) {
        snprintf(why, why_size, "%s: output %zu of %zu is %.9g, reference %.9g", what, res.first,
                 n, res.first_got, res.first_want);
        return -1;
    }
    if (res.max_abs > *err || isnan(*err)) *err = res.max_abs;
    return 0;
}

static const char *fmt_bytes(double b, char *buf, size_t size)
{
    if (b >= 1e9)
        snprintf(buf, size, "%.0f B (%.1f GB)", b, b / 1e9);
    else
        snprintf(buf, size, "%.0f B (%.1f MB)", b, b / 1e6);
    return buf;
}

static int budget_spent(const local1d_suite *s)
{
    return ffnn_bench_now_s() - s->run.t_start > s->o.max_seconds;
}

static void print_row_progress(const row *r)
{
    if (strcmp(r->status, "ok") == 0) {
        char pct[32] = "";
        if (!isnan(r->pct)) snprintf(pct, sizeof pct, "  %6.1f%%", r->pct);
        fprintf(stderr,
                "  %-10s %-6s %-6s %-6s N=%-8" PRIu64 " K=%-5d P=%-2d %10.4f ms  %.3e out/s  "
                "%.3e B/s%s  err %.1e\n",
                r->part, r->regime, r->variant, r->launch, r->N, r->K, r->threads,
                1e3 * r->sec, r->outputs_per_s, r->bytes_per_s, pct, r->err);
    } else
        fprintf(stderr, "  %-10s %-6s %-6s %-6s N=%-8" PRIu64 " K=%-5d P=%-2d %s\n", r->part,
                r->regime, r->variant, r->launch, r->N, r->K, r->threads, r->status);
}

/* ------------------------------------------------------------ GPU part */

#if FFNN_HAVE_CUDA

typedef struct gpu_net {
    size_t N, R;
    int reused;
    float *x0, *buf[2], *W, *b; /* device */
    float *hx0;                 /* x0 on the host */
    void *stream;
    int ref_k;  /* layers the reference covers (0: none yet) */
    float *ref; /* output of the first ref_k layers on the CPU */
} gpu_net;

static const float *gpu_W(const gpu_net *g, int k)
{
    return g->W + (g->reused ? 0 : (size_t)g->R * prefix_outputs(g->N, g->R, k));
}
static const float *gpu_b(const gpu_net *g, int k)
{
    return g->b + (g->reused ? 0 : prefix_outputs(g->N, g->R, k));
}

/* The K-layer forward: layer 0 reads x0, layer k writes buf[k % 2]; no copies. */
static ffnn_status gpu_pass(const gpu_net *g, ffnn_local1d_variant v, int K)
{
    const float *in = g->x0;
    size_t n = g->N;
    for (int k = 0; k < K; k++) {
        float *out = g->buf[k & 1];
        ffnn_status st = ffnn_cuda_local1d_forward_stream(v, g->stream, in, gpu_W(g, k), gpu_b(g, k),
                                                   out, 1, n, g->R, FFNN_LOCAL1D_VALID,
                                                   FFNN_ACT_SIGMOID);
        if (st != FFNN_OK) return st;
        in = out;
        n -= g->R - 1;
    }
    return FFNN_OK;
}

typedef struct gpu_run {
    const gpu_net *g;
    ffnn_local1d_variant v;
    int K, graph;
    void *exec; /* graph mode: the instantiated K-layer pass */
} gpu_run;

static ffnn_status run_prepare(gpu_run *r)
{
    if (!r->graph) return FFNN_OK;
    ffnn_status st = ffnn_lab_capture_begin(r->g->stream);
    if (st != FFNN_OK) return st;
    st = gpu_pass(r->g, r->v, r->K);
    if (st != FFNN_OK) {
        ffnn_lab_capture_abort(r->g->stream);
        return st;
    }
    return ffnn_lab_capture_end(r->g->stream, &r->exec);
}

/* One K-layer pass (arg: a gpu_run), also for ffnn_lab_time. */
static ffnn_status run_launch(void *arg)
{
    const gpu_run *r = arg;
    return r->graph ? ffnn_lab_graph_launch(r->exec, r->g->stream)
                    : gpu_pass(r->g, r->v, r->K);
}

static void run_release(gpu_run *r)
{
    ffnn_lab_graph_destroy(r->exec);
    r->exec = NULL;
}

static ffnn_status run_sync(const gpu_run *r, ffnn_status st)
{
    if (st != FFNN_OK) return st;
    return ffnn_lab_stream_sync(r->g->stream);
}

/* CPU reference of the first kc layers of g (kept in g->ref). */
static ffnn_status gpu_reference(gpu_net *g, int kc)
{
    if (g->ref_k == kc) return FFNN_OK;
    size_t N = g->N, R = g->R;
    float *a = malloc(N * sizeof *a), *z = malloc(N * sizeof *z);
    float *hW = malloc(N * R * sizeof *hW), *hb = malloc(N * sizeof *hb);
    ffnn_status st = FFNN_OK;
    if (!a || !z || !hW || !hb) st = FFNN_ERR_NO_MEMORY;
    if (st == FFNN_OK) memcpy(a, g->hx0, N * sizeof *a);
    size_t n = N;
    for (int k = 0; k < kc && st == FFNN_OK; k++) {
        size_t m = out_width(N, R, k);
        st = ffnn_lab_download(hW, gpu_W(g, k), m * R * sizeof *hW);
        if (st == FFNN_OK) st = ffnn_lab_download(hb, gpu_b(g, k), m * sizeof *hb);
        if (st != FFNN_OK) break;
        ffnn_cpu_local1d_forward(a, hW, hb, z, 1, n, R, FFNN_LOCAL1D_VALID, FFNN_ACT_SIGMOID);
        float *t = a;
        a = z;
        z = t;
        n = m;
    }
    free(z);
    free(hW);
    free(hb);
    if (st != FFNN_OK) {
        free(a);
        return st;
    }
    free(g->ref);
    g->ref = a;
    g->ref_k = kc;
    return FFNN_OK;
}

/* Check one configuration (first layers, then the full pass) and leave its final
 * output in *final (malloc'ed, out_width(K-1) floats). Returns 0, or -1 with why
 * (a failed check) or with *st set (a CUDA error). */
static int gpu_validate(gpu_run *r, gpu_net *g, double *err, float **final, ffnn_status *st,
                        char *why, size_t why_size)
{
    size_t N = g->N, R = g->R;
    int K = r->K, kc = K < 3 ? K : 3;
    *final = NULL;
    *st = gpu_reference(g, kc);
    if (*st != FFNN_OK) return -1;
    size_t mc = out_width(N, R, kc - 1), m = out_width(N, R, K - 1), n_in = m + R - 1;
    float *got = malloc(N * sizeof *got), *in = malloc(N * sizeof *in);
    float *ref = malloc(N * sizeof *ref), *hW = malloc(m * R * sizeof *hW);
    float *hb = malloc(m * sizeof *hb);
    int rc = -1;
    if (!got || !in || !ref || !hW || !hb) {
        *st = FFNN_ERR_NO_MEMORY;
        goto done;
    }
    /* 1. the first kc layers, through the same launch path, outputs poisoned */
    gpu_run first = {g, r->v, kc, r->graph, NULL};
    *st = ffnn_lab_memset(g->buf[0], 0xff, N * sizeof(float));
    if (*st == FFNN_OK) *st = ffnn_lab_memset(g->buf[1], 0xff, N * sizeof(float));
    if (*st == FFNN_OK) *st = run_prepare(&first);
    if (*st == FFNN_OK) *st = run_sync(&first, run_launch(&first));
    run_release(&first);
    if (*st == FFNN_OK) *st = ffnn_lab_download(got, g->buf[(kc - 1) & 1], mc * sizeof *got);
    if (*st != FFNN_OK) goto done;
    char what[64];
    snprintf(what, sizeof what, "first %d layer%s", kc, kc > 1 ? "s" : "");
    if (compare_outputs(got, g->ref, mc, err, what, why, why_size) != 0) goto done;
    /* 2. the full pass; its last layer again on the CPU from the pass's own input */
    *st = ffnn_lab_memset(g->buf[0], 0xff, N * sizeof(float));
    if (*st == FFNN_OK) *st = ffnn_lab_memset(g->buf[1], 0xff, N * sizeof(float));
    if (*st == FFNN_OK) *st = run_sync(r, run_launch(r));
    const float *d_in = K == 1 ? g->x0 : g->buf[(K - 2) & 1];
    if (*st == FFNN_OK) *st = ffnn_lab_download(in, d_in, n_in * sizeof *in);
    if (*st == FFNN_OK) *st = ffnn_lab_download(got, g->buf[(K - 1) & 1], m * sizeof *got);
    if (*st == FFNN_OK) *st = ffnn_lab_download(hW, gpu_W(g, K - 1), m * R * sizeof *hW);
    if (*st == FFNN_OK) *st = ffnn_lab_download(hb, gpu_b(g, K - 1), m * sizeof *hb);
    if (*st != FFNN_OK) goto done;
    for (size_t i = 0; i < n_in; i++)
        if (!isfinite(in[i]) || in[i] < 0.0f || in[i] > 1.0f) {
            snprintf(why, why_size, "input of layer %d: element %zu of %zu is %.9g", K, i,
                     n_in, (double)in[i]);
            goto done;
        }
    ffnn_cpu_local1d_forward(in, hW, hb, ref, 1, n_in, R, FFNN_LOCAL1D_VALID,
                             FFNN_ACT_SIGMOID);
    snprintf(what, sizeof what, "layer %d of %d", K, K);
    if (compare_outputs(got, ref, m, err, what, why, why_size) != 0) goto done;
    *final = got;
    got = NULL;
    rc = 0;
done:
    free(got);
    free(in);
    free(ref);
    free(hW);
    free(hb);
    return rc;
}

/* Record a CUDA error in r; an error that left the context unusable stops the GPU part. */
static void note_cuda_error(local1d_suite *s, row *r, const char *stage)
{
    const char *msg = ffnn_last_error();
    snprintf(r->status, sizeof r->status, "failed: %s: %s", stage, msg);
    if (strstr(msg, "unusable") != NULL) s->gpu_dead = 1;
}

/* One configuration: check, time, check again; fills r. */
static void gpu_config(local1d_suite *s, gpu_net *g, int v, int launch, int K, row *r)
{
    gpu_run run = {g, (ffnn_local1d_variant)v, K, launch, NULL};
    float *final = NULL, *again = NULL;
    ffnn_status st = run_prepare(&run);
    if (st != FFNN_OK) {
        note_cuda_error(s, r, launch ? "graph capture" : "launch");
        goto done;
    }
    char why[256] = "";
    double err = NAN;
    if (gpu_validate(&run, g, &err, &final, &st, why, sizeof why) != 0) {
        if (st != FFNN_OK)
            note_cuda_error(s, r, "check");
        else
            snprintf(r->status, sizeof r->status, "failed: check: %s", why);
        goto done;
    }
    r->err = err;
    /* one warm-up pass, then each pass between two events */
    const ffnn_lab_timing timing = {1, s->o.repeats, 1, 0.0, 1, 0.0};
    ffnn_lab_times t;
    st = ffnn_lab_time(g->stream, run_launch, &run, &timing, &t);
    if (st != FFNN_OK) {
        note_cuda_error(s, r, "timing");
        goto done;
    }
    size_t m = out_width(g->N, g->R, K - 1);
    again = malloc(m * sizeof *again);
    st = again ? ffnn_lab_download(again, g->buf[(K - 1) & 1], m * sizeof *again)
               : FFNN_ERR_NO_MEMORY;
    if (st != FFNN_OK) {
        note_cuda_error(s, r, "check after timing");
        goto done;
    }
    if (memcmp(again, final, m * sizeof *again) != 0) {
        snprintf(r->status, sizeof r->status,
                 "failed: the final output changed between passes on the same input");
        goto done;
    }
    r->sec = 1e-6 * t.median_us, r->sec_min = 1e-6 * t.min_us, r->sec_max = 1e-6 * t.max_us;
    set_rates(r, s->gs.ceiling);
done:
    run_release(&run);
    free(final);
    free(again);
}

static void gpu_free_net(gpu_net *g)
{
    ffnn_lab_free(g->x0);
    ffnn_lab_free(g->buf[0]);
    ffnn_lab_free(g->buf[1]);
    ffnn_lab_free(g->W);
    ffnn_lab_free(g->b);
    free(g->hx0);
    free(g->ref);
    g->x0 = g->buf[0] = g->buf[1] = g->W = g->b = g->hx0 = g->ref = NULL;
    g->ref_k = 0;
}

static ffnn_status gpu_alloc_net(gpu_net *g, int kalloc, uint64_t seed)
{
    size_t N = g->N, R = g->R;
    uint64_t wf = w_floats(N, R, kalloc, g->reused), bf = b_floats(N, R, kalloc, g->reused);
    ffnn_status st = ffnn_lab_malloc((void **)&g->x0, N * sizeof(float));
    if (st == FFNN_OK) st = ffnn_lab_malloc((void **)&g->buf[0], N * sizeof(float));
    if (st == FFNN_OK) st = ffnn_lab_malloc((void **)&g->buf[1], N * sizeof(float));
    if (st == FFNN_OK) st = ffnn_lab_malloc((void **)&g->W, wf * sizeof(float));
    if (st == FFNN_OK) st = ffnn_lab_malloc((void **)&g->b, bf * sizeof(float));
    if (st == FFNN_OK) st = ffnn_lab_fill_uniform(g->x0, N, seed * 16 + 1, 0.0f, 1.0f);
    if (st == FFNN_OK) st = ffnn_lab_fill_uniform(g->W, wf, seed * 16 + 2, -0.5f, 0.5f);
    if (st == FFNN_OK) st = ffnn_lab_fill_uniform(g->b, bf, seed * 16 + 3, -0.5f, 0.5f);
    if (st == FFNN_OK) {
        g->hx0 = malloc(N * sizeof(float));
        st = g->hx0 ? ffnn_lab_download(g->hx0, g->x0, N * sizeof(float))
                    : FFNN_ERR_NO_MEMORY;
    }
    return st;
}

static void gpu_part(local1d_suite *s)
{
    const options *o = &s->o;
    gpu_summary *gs = &s->gs;
    ffnn_lab_gpu_info *info = &gs->info;
    if (ffnn_lab_gpu_query(info) != FFNN_OK) {
        row *r = new_row(s, "gpu", "", "", "", "");
        snprintf(r->status, sizeof r->status, "skipped: %s", ffnn_last_error());
        fprintf(stderr, "GPU part skipped: %s\n", ffnn_last_error());
        return;
    }
    snprintf(gs->name, sizeof gs->name, "%s", info->name);
    gs->ran = 1;
    fprintf(stderr, "GPU: %s (sm_%d%d, %d SMs, L2 %.1f MB, memory %.1f GB, free %.1f GB)\n",
            info->name, info->cc_major, info->cc_minor, info->sm_count,
            (double)info->l2_bytes / 1e6, (double)info->total_bytes / 1e9,
            (double)info->free_bytes / 1e9);

    /* the copy ceiling */
    size_t copy_bytes = (size_t)(o->copy_mib * 1048576.0);
    if (copy_bytes > info->free_bytes / 4) copy_bytes = info->free_bytes / 4;
    double med = 0.0, bps = 0.0;
    row *c = new_row(s, "copy", "memcpy_d2d", "", "", info->name);
    c->bytes_needed = 2.0 * (double)copy_bytes;
    if (ffnn_lab_copy_ceiling(copy_bytes, 11, &med, &bps) != FFNN_OK) {
        note_cuda_error(s, c, "copy ceiling");
        fprintf(stderr, "copy ceiling: %s\n", c->status);
        return;
    }
    c->sec = med;
    c->bytes_per_s = bps;
    c->pct = 100.0;
    gs->ceiling = bps;
    fprintf(stderr,
            "copy ceiling: cudaMemcpy device-to-device of %.0f MiB: %.4f ms median of 11, "
            "%.3e B/s (read + written)\n",
            (double)copy_bytes / 1048576.0, 1e3 * med, bps);

    gpu_net g;
    memset(&g, 0, sizeof g);
    g.R = (size_t)o->R;
    if (ffnn_lab_stream_create(&g.stream) != FFNN_OK) {
        row *r = new_row(s, "gpu", "", "", "", info->name);
        note_cuda_error(s, r, "stream/events");
        goto out;
    }
    for (int reg = 0; reg < 2; reg++) {
        if (!o->regime[reg]) continue;
        for (int ni = 0; ni < o->n_nlog2; ni++) {
            size_t N = (size_t)1 << o->nlog2[ni];
            g.N = N;
            g.reused = reg;
            size_t free_b = 0, total_b = 0;
            if (!s->gpu_dead && ffnn_lab_mem_info(&free_b, &total_b) != FFNN_OK) s->gpu_dead = 1;
            double avail = (double)free_b - (1.0 * 1073741824.0 + 0.01 * (double)total_b);
            int kalloc = 0;
            for (int ki = 0; ki < o->n_ks; ki++) {
                int K = o->ks[ki];
                if (valid_depth(N, g.R, K) && bytes_needed(N, g.R, K, reg) <= avail &&
                    K > kalloc)
                    kalloc = K;
            }
            int allocated = 0;
            ffnn_status ast = FFNN_OK;
            char bb[64], fb[64], alloc_why[256] = "";
            for (int ki = 0; ki < o->n_ks; ki++) {
                int K = o->ks[ki];
                for (int v = 0; v < 2; v++) {
                    if (!o->variant[v]) continue;
                    for (int l = 0; l < 2; l++) {
                        if (!o->launch[l]) continue;
                        row *r = new_row(s, "gpu", variant_names[v], launch_names[l],
                                         regime_names[reg], info->name);
                        r->N = N;
                        r->K = K;
                        r->R = o->R;
                        r->threads = 0;
                        r->bytes_per_output = bytes_per_output(g.R, reg);
                        if (valid_depth(N, g.R, K)) {
                            r->outputs = prefix_outputs(N, g.R, K);
                            r->bytes_needed = bytes_needed(N, g.R, K, reg);
                        }
                        if (s->gpu_dead) {
                            snprintf(r->status, sizeof r->status,
                                     "skipped: an earlier CUDA error left the context unusable");
                        } else if (!valid_depth(N, g.R, K)) {
                            snprintf(r->status, sizeof r->status,
                                     "skipped: N = %zu is too narrow for %d valid layers of "
                                     "R = %d",
                                     N, K, o->R);
                        } else if (r->bytes_needed > avail) {
                            snprintf(r->status, sizeof r->status,
                                     "skipped: needs %s of GPU memory; %s free (less a "
                                     "reserve of 1 GiB + 1%%)",
                                     fmt_bytes(r->bytes_needed, bb, sizeof bb),
                                     fmt_bytes((double)free_b, fb, sizeof fb));
                        } else if (budget_spent(s)) {
                            snprintf(r->status, sizeof r->status,
                                     "skipped: time budget (--max-seconds %.0f) spent",
                                     o->max_seconds);
                        } else {
                            /* weights for the deepest K that fits, once per N; when
                             * cudaMalloc refuses, the next smaller K of the list */
                            while (!allocated) {
                                ast = gpu_alloc_net(&g, kalloc, o->seed);
                                if (ast == FFNN_OK) {
                                    allocated = 1;
                                    break;
                                }
                                fprintf(stderr, "allocation for K = %d failed: %s\n", kalloc,
                                        ffnn_last_error());
                                snprintf(alloc_why, sizeof alloc_why, "%s", ffnn_last_error());
                                gpu_free_net(&g);
                                if (strstr(alloc_why, "unusable")) {
                                    s->gpu_dead = 1;
                                    allocated = 1;
                                    break;
                                }
                                int next = 0;
                                for (int kj = 0; kj < o->n_ks; kj++)
                                    if (o->ks[kj] < kalloc && o->ks[kj] > next &&
                                        valid_depth(N, g.R, o->ks[kj]))
                                        next = o->ks[kj];
                                kalloc = next;
                                if (kalloc == 0) allocated = 1;
                            }
                            if (ast != FFNN_OK || K > kalloc)
                                snprintf(r->status, sizeof r->status,
                                         "skipped: allocating %s of GPU memory failed: %s",
                                         fmt_bytes(r->bytes_needed, bb, sizeof bb), alloc_why);
                            else
                                gpu_config(s, &g, v, l, K, r);
                        }
                        print_row_progress(r);
                    }
                }
            }
            gpu_free_net(&g);
        }
    }
out:
    gpu_free_net(&g);
    ffnn_lab_stream_destroy(g.stream);
}

#else /* no CUDA: the GPU part is one skipped row */

static void gpu_part(local1d_suite *s)
{
    const char *why = "this build has no CUDA (nvcc was not found)";
    row *r = new_row(s, "gpu", "", "", "", "");
    snprintf(r->status, sizeof r->status, "skipped: %s", why);
    fprintf(stderr, "GPU part skipped: %s\n", why);
}

#endif /* FFNN_HAVE_CUDA */

/* ------------------------------------------------------------ OpenMP part */

static void fill_host(float *p, uint64_t n, uint64_t seed, float lo, float hi)
{
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (uint64_t i = 0; i < n; i++) p[i] = ffnn_lab_uniform_at(seed, i, lo, hi);
}

static void poison_host(float *p, size_t n)
{
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (size_t i = 0; i < n; i++) p[i] = NAN;
}

typedef struct cpu_net {
    size_t R;
    int reused;
    float *x0, *buf[2], *W, *b;
} cpu_net;

/* K layers at input width N on `threads` OpenMP threads (0: the single-threaded
 * reference); the same buffer discipline as the GPU driver. */
static void cpu_pass(const cpu_net *c, size_t N, int K, int threads)
{
    const float *in = c->x0;
    size_t n = N, R = c->R;
    for (int k = 0; k < K; k++) {
        float *out = c->buf[k & 1];
        const float *W = c->W + (c->reused ? 0 : R * prefix_outputs(N, R, k));
        const float *b = c->b + (c->reused ? 0 : prefix_outputs(N, R, k));
        if (threads == 0)
            ffnn_cpu_local1d_forward(in, W, b, out, 1, n, R, FFNN_LOCAL1D_VALID,
                                     FFNN_ACT_SIGMOID);
        else
            ffnn_omp_local1d_forward_threads(in, W, b, out, 1, n, R, FFNN_LOCAL1D_VALID,
                                     FFNN_ACT_SIGMOID, threads);
        in = out;
        n -= R - 1;
    }
}

/* One OpenMP configuration: check (first layers against the reference, last layer of
 * the warm-up pass), time, check the bits again. */
static void cpu_config(const options *o, cpu_net *c, size_t N, int K, int P, row *r)
{
    size_t R = c->R;
    int kc = K < 3 ? K : 3;
    size_t mc = out_width(N, R, kc - 1), m = out_width(N, R, K - 1), n_in = m + R - 1;
    float *ref = malloc(N * sizeof *ref), *final = malloc(m * sizeof *final);
    double *times = malloc((size_t)o->cpu_repeats * sizeof *times);
    char why[256] = "";
    double err = NAN;
    if (!ref || !final || !times) {
        snprintf(r->status, sizeof r->status, "failed: out of host memory");
        goto done;
    }
    /* the reference of the first kc layers, then the same through OpenMP */
    poison_host(c->buf[0], N);
    poison_host(c->buf[1], N);
    cpu_pass(c, N, kc, 0);
    memcpy(ref, c->buf[(kc - 1) & 1], mc * sizeof *ref);
    poison_host(c->buf[0], N);
    poison_host(c->buf[1], N);
    cpu_pass(c, N, kc, P);
    char what[64];
    snprintf(what, sizeof what, "first %d layer%s", kc, kc > 1 ? "s" : "");
    if (compare_outputs(c->buf[(kc - 1) & 1], ref, mc, &err, what, why, sizeof why) != 0) {
        snprintf(r->status, sizeof r->status, "failed: check: %s", why);
        goto done;
    }
    /* the warm-up: a full pass, its last layer checked */
    poison_host(c->buf[0], N);
    poison_host(c->buf[1], N);
    cpu_pass(c, N, K, P);
    {
        const float *in = K == 1 ? c->x0 : c->buf[(K - 2) & 1];
        size_t off = c->reused ? 0 : prefix_outputs(N, R, K - 1);
        ffnn_cpu_local1d_forward(in, c->W + R * off, c->b + off, ref, 1, n_in, R,
                                 FFNN_LOCAL1D_VALID, FFNN_ACT_SIGMOID);
    }
    snprintf(what, sizeof what, "layer %d of %d", K, K);
    if (compare_outputs(c->buf[(K - 1) & 1], ref, m, &err, what, why, sizeof why) != 0) {
        snprintf(r->status, sizeof r->status, "failed: check: %s", why);
        goto done;
    }
    memcpy(final, c->buf[(K - 1) & 1], m * sizeof *final);
    for (int i = 0; i < o->cpu_repeats; i++) {
        double t0 = ffnn_bench_now_s();
        cpu_pass(c, N, K, P);
        times[i] = ffnn_bench_now_s() - t0;
    }
    if (memcmp(final, c->buf[(K - 1) & 1], m * sizeof *final) != 0) {
        snprintf(r->status, sizeof r->status,
                 "failed: the final output changed between passes on the same input");
        goto done;
    }
    r->err = err;
    r->sec = ffnn_lab_median(times, (size_t)o->cpu_repeats, &r->sec_min, &r->sec_max);
    set_rates(r, 0.0);
done:
    free(ref);
    free(final);
    free(times);
}

static void cpu_part(local1d_suite *s)
{
    const options *o = &s->o;
    cpu_summary *cs = &s->cs;
    cs->name = s->run.cpu_name;
    fprintf(stderr, "OpenMP part on this machine's CPU: %s\n", cs->name);
    size_t R = (size_t)o->R;
    int K = o->cpu_k, maxP = 1, minP = o->threads[0];
    for (int i = 0; i < o->n_threads; i++) {
        if (o->threads[i] > maxP) maxP = o->threads[i];
        if (o->threads[i] < minP) minP = o->threads[i];
    }
    size_t Ns = (size_t)1 << o->cpu_nlog2, Nw = (size_t)1 << o->cpu_weak_nlog2;
    size_t Nmax = Ns > Nw * (size_t)maxP ? Ns : Nw * (size_t)maxP;
    long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    double host_free = pages > 0 && page > 0 ? (double)pages * (double)page : INFINITY;
    for (int reg = 0; reg < 2; reg++) {
        if (!o->regime[reg]) continue;
        cpu_net c = {R, reg, NULL, {NULL, NULL}, NULL, NULL};
        double need = bytes_needed(Nmax, R, K, reg);
        const char *skip = NULL;
        char skipbuf[256], bb[64], fb[64];
        if (!valid_depth(Nw * (size_t)minP, R, K) || !valid_depth(Ns, R, K)) {
            snprintf(skipbuf, sizeof skipbuf,
                     "skipped: N too narrow for %d valid layers of R = %d", K, o->R);
            skip = skipbuf;
        } else if (need > 0.8 * host_free) {
            snprintf(skipbuf, sizeof skipbuf, "skipped: needs %s of host memory; %s free",
                     fmt_bytes(need, bb, sizeof bb), fmt_bytes(host_free, fb, sizeof fb));
            skip = skipbuf;
        } else {
            uint64_t wf = w_floats(Nmax, R, K, reg), bf = b_floats(Nmax, R, K, reg);
            c.x0 = malloc(Nmax * sizeof(float));
            c.buf[0] = malloc(Nmax * sizeof(float));
            c.buf[1] = malloc(Nmax * sizeof(float));
            c.W = malloc(wf * sizeof(float));
            c.b = malloc(bf * sizeof(float));
            if (!c.x0 || !c.buf[0] || !c.buf[1] || !c.W || !c.b) {
                snprintf(skipbuf, sizeof skipbuf, "skipped: could not allocate %s",
                         fmt_bytes(need, bb, sizeof bb));
                skip = skipbuf;
            } else {
                fill_host(c.x0, Nmax, o->seed * 16 + 1, 0.0f, 1.0f);
                fill_host(c.W, wf, o->seed * 16 + 2, -0.5f, 0.5f);
                fill_host(c.b, bf, o->seed * 16 + 3, -0.5f, 0.5f);
                poison_host(c.buf[0], Nmax);
                poison_host(c.buf[1], Nmax);
            }
        }
        for (int part = 0; part < 2; part++) {
            double base = NAN;
            for (int i = 0; i < o->n_threads; i++) {
                int P = o->threads[i];
                size_t N = part == 0 ? Ns : Nw * (size_t)P;
                row *r = new_row(s, part == 0 ? "omp_strong" : "omp_weak", "omp", "",
                                 regime_names[reg], cs->name);
                r->N = N;
                r->K = K;
                r->R = o->R;
                r->threads = P;
                r->bytes_per_output = bytes_per_output(R, reg);
                if (valid_depth(N, R, K)) {
                    r->outputs = prefix_outputs(N, R, K);
                    r->bytes_needed = bytes_needed(N, R, K, reg);
                }
                if (skip)
                    snprintf(r->status, sizeof r->status, "%s", skip);
                else if (budget_spent(s))
                    snprintf(r->status, sizeof r->status,
                             "skipped: time budget (--max-seconds %.0f) spent", o->max_seconds);
                else
                    cpu_config(o, &c, N, K, P, r);
                if (strcmp(r->status, "ok") == 0) {
                    if (isnan(base)) base = r->sec;
                    r->scaling = base / r->sec;
                    cs->ran = 1;
                }
                print_row_progress(r);
            }
        }
        free(c.x0);
        free(c.buf[0]);
        free(c.buf[1]);
        free(c.W);
        free(c.b);
    }
}

/* ------------------------------------------------------------ output */

/* The CSV file's columns (the harness adds the last, "date"). */
static const char *csv_header =
    "part,variant,launch,regime,N,K,R,threads,outputs,bytes_per_output,seconds,"
    "seconds_min,seconds_max,outputs_per_s,bytes_per_s,pct_copy_ceiling,t_base_over_t,"
    "max_abs_err,status,bytes_needed,device";

static void csv_row(FILE *f, const void *vr, const void *vs)
{
    (void)vs;
    const row *r = vr;
    fprintf(f, "%s,%s,%s,%s,%" PRIu64 ",%d,%d,%d,%" PRIu64 ",", r->part, r->variant,
            r->launch, r->regime, r->N, r->K, r->R, r->threads, r->outputs);
    FFNN_BENCH_CSV_NUMS(f, r->bytes_per_output, r->sec, r->sec_min, r->sec_max,
                        r->outputs_per_s, r->bytes_per_s, r->pct, r->scaling, r->err);
    ffnn_bench_csv_field(f, r->status);
    fputc(',', f);
    if (!isnan(r->bytes_needed)) fprintf(f, "%.0f", r->bytes_needed);
    fputc(',', f);
    ffnn_bench_csv_field(f, r->device);
}

static const row *find_gpu(const local1d_suite *s, const char *regime, const char *variant,
                           const char *launch, uint64_t N, int K)
{
    for (size_t i = 0; i < s->run.n_rows; i++) {
        const row *r = row_at(s, i);
        if (strcmp(r->part, "gpu") == 0 && strcmp(r->regime, regime) == 0 &&
            strcmp(r->variant, variant) == 0 && strcmp(r->launch, launch) == 0 && r->N == N &&
            r->K == K)
            return r;
    }
    return NULL;
}

static int is_ok(const row *r) { return r != NULL && ffnn_bench_ok(r->status); }

static void log2_label(uint64_t N, char *buf, size_t size)
{
    int e = 0;
    while (((uint64_t)1 << e) < N && e < 63) e++;
    if (((uint64_t)1 << e) == N)
        snprintf(buf, size, "2^%d", e);
    else
        snprintf(buf, size, "%" PRIu64, N);
}

static void write_table(FILE *f, const void *vs)
{
    const local1d_suite *s = vs;
    const options *o = &s->o;
    const gpu_summary *gs = &s->gs;
    const cpu_summary *cs = &s->cs;
    size_t R = (size_t)o->R;
    ffnn_bench_md_heading(f, &s->run,
                          "Report 002: K-layer forward of a 1-D locally connected layer (R = %d)",
                          o->R);
    fputs("\n\n", f);
    if (gs->ran)
        fprintf(f,
                "- GPU: %s (%d SMs, L2 %.1f MB, %.1f GB). Copy ceiling (device-to-device "
                "cudaMemcpy, bytes read + written, median of 11): **%.3e B/s**.\n",
                gs->name, gs->info.sm_count, (double)gs->info.l2_bytes / 1e6,
                (double)gs->info.total_bytes / 1e9, gs->ceiling);
    else if (!o->gpu)
        fprintf(f, "- GPU part not run (--no-gpu).\n");
    else
        fprintf(f, "- GPU part not run: %s\n",
                s->run.n_rows ? row_at(s, 0)->status : "see the CSV");
    if (o->cpu) fprintf(f, "- CPU (the OpenMP part ran on this machine's CPU): %s.\n", cs->name);
    fprintf(f,
            "- Layer: valid padding as the seed's formula (layer k maps N-(k-1)(R-1) inputs "
            "to N-k(R-1) outputs), batch 1, sigmoid fused; outputs of a pass = "
            "sum_{k=1..K} (N - k(R-1)), counted in 64 bits. Two activation buffers swapped "
            "by pointer, no copies.\n"
            "- Byte model per output: **unique** weights 4(R+1) + 8 = %.0f B (R weights, "
            "bias, input, output); **reused** weights (one set for all layers, in L2) 8 B "
            "(input, output). %% = bytes/s over the copy ceiling; small N fit in L2 and can "
            "exceed 100%%.\n"
            "- Inputs U(0,1), weights and biases U(-0.5,0.5). Each configuration is checked "
            "before timing (first layers and the last layer against the CPU reference, "
            "tolerance %.0e) and again after (same bits); time: median of %d passes after a "
            "warm-up (GPU: CUDA events; CPU: host clock, median of %d).\n",
            bytes_per_output(R, 0), CHECK_TOL, o->repeats, o->cpu_repeats);

    if (gs->ran && o->regime[1] && o->n_nlog2 > 0) {
        int emax = o->nlog2[0];
        for (int ni = 1; ni < o->n_nlog2; ni++)
            if (o->nlog2[ni] > emax) emax = o->nlog2[ni];
        size_t N = (size_t)1 << emax;
        fprintf(f,
                "- Reused weights: the one weight set (W and bias) is %.1f MB at N = 2^%d, the "
                "two activation buffers %.1f MB; L2: %.1f MB.\n",
                4.0 * (double)(R + 1) * (double)out_width(N, R, 0) / 1e6, emax,
                8.0 * (double)N / 1e6, (double)gs->info.l2_bytes / 1e6);
    }
    if (gs->ran) {
        fprintf(f, "\n### GPU: outputs/s (%% of the copy ceiling)\n\n| regime | variant | launch | K |");
        for (int ni = 0; ni < o->n_nlog2; ni++) fprintf(f, " N=2^%d |", o->nlog2[ni]);
        fprintf(f, "\n|---|---|---|---|");
        for (int ni = 0; ni < o->n_nlog2; ni++) fprintf(f, "---|");
        fputc('\n', f);
        for (int reg = 0; reg < 2; reg++) {
            if (!o->regime[reg]) continue;
            for (int ki = 0; ki < o->n_ks; ki++)
                for (int v = 0; v < 2; v++)
                    for (int l = 0; l < 2; l++) {
                        if (!o->variant[v] || !o->launch[l]) continue;
                        fprintf(f, "| %s | %s | %s | %d |", regime_names[reg], variant_names[v],
                                launch_names[l], o->ks[ki]);
                        for (int ni = 0; ni < o->n_nlog2; ni++) {
                            const row *r = find_gpu(s, regime_names[reg], variant_names[v],
                                                    launch_names[l],
                                                    (uint64_t)1 << o->nlog2[ni], o->ks[ki]);
                            if (is_ok(r))
                                fprintf(f, " %.3g (%.0f%%) |", r->outputs_per_s, r->pct);
                            else if (r && strncmp(r->status, "skipped", 7) == 0)
                                fprintf(f, " skipped |");
                            else
                                fprintf(f, " FAILED |");
                        }
                        fputc('\n', f);
                    }
        }
        fputc('\n', f);
        /* skipped and failed GPU configurations, once per (regime, N, K) */
        int header = 0;
        for (size_t i = 0; i < s->run.n_rows; i++) {
            const row *r = row_at(s, i);
            if (strcmp(r->part, "gpu") != 0 || is_ok(r)) continue;
            int dup = 0;
            for (size_t j = 0; j < i && ffnn_bench_skipped(r->status); j++) {
                const row *q = row_at(s, j);
                if (strcmp(q->part, "gpu") == 0 && q->N == r->N && q->K == r->K &&
                    strcmp(q->regime, r->regime) == 0 && strcmp(q->status, r->status) == 0)
                    dup = 1;
            }
            if (dup) continue;
            if (!header) {
                fprintf(f, "Not measured:\n\n");
                header = 1;
            }
            char nl[32];
            log2_label(r->N, nl, sizeof nl);
            if (strncmp(r->status, "skipped", 7) == 0)
                fprintf(f, "- %s weights, N = %s, K = %d: %s\n", r->regime, nl, r->K, r->status);
            else
                fprintf(f, "- %s weights, %s/%s, N = %s, K = %d: %s\n", r->regime, r->variant,
                        r->launch, nl, r->K, r->status);
        }
        if (header) fputc('\n', f);

        /* summary: target, seed, best */
        const row *best = NULL;
        for (size_t i = 0; i < s->run.n_rows; i++) {
            const row *r = row_at(s, i);
            if (strcmp(r->part, "gpu") == 0 && is_ok(r) && strcmp(r->variant, "shared") == 0 &&
                strcmp(r->regime, "unique") == 0 && (best == NULL || r->pct > best->pct))
                best = r;
        }
        if (best) {
            char nl[32];
            log2_label(best->N, nl, sizeof nl);
            fprintf(f,
                    "- Target (shared kernel, unique weights, >= 80%% of the copy ceiling): best "
                    "%.1f%% (%s launch, N = %s, K = %d: %.3e outputs/s, %.3e B/s) - **%s**.\n",
                    best->pct, best->launch, nl, best->K, best->outputs_per_s, best->bytes_per_s,
                    best->pct >= 80.0 ? "met" : "not met");
        }
        const row *s21 = find_gpu(s, "unique", "shared", "stream", (uint64_t)1 << 21, 1000);
        const row *g21 = find_gpu(s, "unique", "shared", "graph", (uint64_t)1 << 21, 1000);
        for (int l = 0; l < 2; l++) {
            const row *r = l == 0 ? s21 : g21;
            if (is_ok(r))
                fprintf(f,
                        "- Seed 002 (L40, shared kernel, N = 2^21, K = 1000): 1.58e11 outputs/s. "
                        "Here, shared, unique weights, %s launch: %.3e outputs/s = %.2fx.\n",
                        r->launch, r->outputs_per_s, r->outputs_per_s / SEED_L40_OUTPUTS);
        }
    }

    if (o->cpu) {
        for (int part = 0; part < 2; part++) {
            const char *pname = part == 0 ? "omp_strong" : "omp_weak";
            if (part == 0)
                fprintf(f,
                        "\n### OpenMP strong scaling (N = 2^%d, K = %d), %s\n\n"
                        "| regime | threads | seconds | outputs/s | bytes/s | speedup | "
                        "efficiency |\n|---|---|---|---|---|---|---|\n",
                        o->cpu_nlog2, o->cpu_k, cs->name);
            else
                fprintf(f,
                        "\n### OpenMP weak scaling (N = 2^%d per thread, K = %d), %s\n\n"
                        "| regime | threads | N | seconds | outputs/s | bytes/s | efficiency "
                        "|\n|---|---|---|---|---|---|---|\n",
                        o->cpu_weak_nlog2, o->cpu_k, cs->name);
            for (size_t i = 0; i < s->run.n_rows; i++) {
                const row *r = row_at(s, i);
                if (strcmp(r->part, pname) != 0) continue;
                if (!is_ok(r)) {
                    fprintf(f, "| %s | %d | %s |\n", r->regime, r->threads, r->status);
                    continue;
                }
                if (part == 0)
                    fprintf(f, "| %s | %d | %.4f | %.3e | %.3e | %.2f | %.0f%% |\n", r->regime,
                            r->threads, r->sec, r->outputs_per_s, r->bytes_per_s, r->scaling,
                            100.0 * r->scaling * (double)o->threads[0] / (double)r->threads);
                else {
                    char nl[32];
                    log2_label(r->N, nl, sizeof nl);
                    fprintf(f, "| %s | %d | %s | %.4f | %.3e | %.3e | %.0f%% |\n", r->regime,
                            r->threads, nl, r->sec, r->outputs_per_s, r->bytes_per_s,
                            100.0 * r->scaling);
                }
            }
        }
        fprintf(f, "\nSpeedup and efficiency are relative to %d thread%s.\n", o->threads[0],
                o->threads[0] > 1 ? "s" : "");
        /* GPU vs CPU, as the seed's figure 6 (per-output throughput) */
        if (gs->ran) {
            /* the seed compared with 8 threads; also the fastest thread count */
            const row *cpu_best = NULL, *cpu8 = NULL;
            for (size_t i = 0; i < s->run.n_rows; i++) {
                const row *r = row_at(s, i);
                if (strcmp(r->part, "omp_strong") != 0 || strcmp(r->regime, "unique") != 0 ||
                    !is_ok(r))
                    continue;
                if (cpu_best == NULL || r->outputs_per_s > cpu_best->outputs_per_s) cpu_best = r;
                if (r->threads == 8) cpu8 = r;
            }
            const row *g20 = find_gpu(s, "unique", "shared", "stream", (uint64_t)1 << o->cpu_nlog2,
                                      o->n_ks ? o->ks[0] : 0);
            for (int w = 0; w < 2 && is_ok(g20); w++) {
                const row *c = w == 0 ? cpu8 : cpu_best;
                if (c == NULL || (w == 1 && c == cpu8)) continue;
                fprintf(f,
                        "\nGPU shared (stream, unique, N = 2^%d, K = %d) over OpenMP with %d "
                        "threads (unique, K = %d%s): %.1fx in outputs/s (seed 002: 210-383x "
                        "over 8 threads).\n",
                        o->cpu_nlog2, g20->K, c->threads, c->K, w == 1 ? ", the fastest" : "",
                        g20->outputs_per_s / c->outputs_per_s);
            }
        }
    }
}

/* ------------------------------------------------------------ the suite */

int ffnn_bench_local1d(int argc, char **argv)
{
    local1d_suite s;
    memset(&s, 0, sizeof s);
    ffnn_bench_begin(&s.run, "local1d", sizeof(row), offsetof(row, status));
    options *o = &s.o;
    o->R = 3;
    o->repeats = o->cpu_repeats = o->cpu_k = o->cpu_nlog2 = o->cpu_weak_nlog2 = -1;
    o->gpu = o->cpu = 1;
    o->regime[0] = o->regime[1] = o->variant[0] = o->variant[1] = 1;
    o->launch[0] = o->launch[1] = 1;
    o->seed = 2;
    int copy_i = 0;
    double maxs = -1;
    const ffnn_bench_option opts[] = {
        FFNN_BENCH_OPT_COMMON(o),
        FFNN_BENCH_OPT_POSITIVE("max-seconds", &maxs),
        FFNN_BENCH_OPT_LIST("n-log2", o->nlog2, &o->n_nlog2, MAX_LIST, 2, 30),
        FFNN_BENCH_OPT_LIST("k", o->ks, &o->n_ks, MAX_LIST, 1, 1000000),
        FFNN_BENCH_OPT_INT("r", &o->R, 1, 63),
        FFNN_BENCH_OPT_INT("repeats", &o->repeats, 3, 1000),
        FFNN_BENCH_OPT_NAMES("regimes", o->regime, regime_names),
        FFNN_BENCH_OPT_NAMES("variants", o->variant, variant_names),
        FFNN_BENCH_OPT_NAMES("launch", o->launch, launch_names),
        FFNN_BENCH_OPT_INT("copy-mib", &copy_i, 1, 1 << 20),
        FFNN_BENCH_OPT_LIST("cpu-threads", o->threads, &o->n_threads, MAX_LIST, 1, 1024),
        FFNN_BENCH_OPT_INT("cpu-k", &o->cpu_k, 1, 1000000),
        FFNN_BENCH_OPT_INT("cpu-n-log2", &o->cpu_nlog2, 2, 30),
        FFNN_BENCH_OPT_INT("cpu-weak-n-log2", &o->cpu_weak_nlog2, 2, 30),
        FFNN_BENCH_OPT_INT("cpu-repeats", &o->cpu_repeats, 1, 1000),
        FFNN_BENCH_OPT_END,
    };
    const int parsed = ffnn_bench_parse_options(&s.run, usage, opts, argc, argv);
    if (parsed != 0) return parsed == 1 ? 0 : 2;
    if (o->R % 2 == 0) {
        fprintf(stderr, "ffnn bench local1d: --r must be odd, found %d\n", o->R);
        return 2;
    }
    /* defaults (--quick: a smoke run) */
    if (o->n_nlog2 == 0) {
        static const int full[] = {17, 18, 19, 20, 21}, quick[] = {12, 14};
        o->n_nlog2 = o->quick ? 2 : 5;
        memcpy(o->nlog2, o->quick ? quick : full, (size_t)o->n_nlog2 * sizeof(int));
    }
    if (o->n_ks == 0) {
        static const int full[] = {1000, 2000, 4000}, quick[] = {10, 50};
        o->n_ks = o->quick ? 2 : 3;
        memcpy(o->ks, o->quick ? quick : full, (size_t)o->n_ks * sizeof(int));
    }
    if (o->n_threads == 0) {
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        if (ncpu < 1) ncpu = 1;
        for (long p = 1; p <= ncpu && o->n_threads < MAX_LIST; p *= 2)
            o->threads[o->n_threads++] = (int)p;
        if (o->threads[o->n_threads - 1] != ncpu && o->n_threads < MAX_LIST)
            o->threads[o->n_threads++] = (int)ncpu;
    }
    if (o->repeats < 0) o->repeats = o->quick ? 3 : 5;
    if (o->cpu_repeats < 0) o->cpu_repeats = 3;
    if (o->cpu_k < 0) o->cpu_k = o->quick ? 10 : 300;
    if (o->cpu_nlog2 < 0) o->cpu_nlog2 = o->quick ? 16 : 20;
    if (o->cpu_weak_nlog2 < 0) o->cpu_weak_nlog2 = o->quick ? 14 : 16;
    o->copy_mib = copy_i > 0 ? copy_i : (o->quick ? 64 : 2048);
    o->max_seconds = maxs > 0 ? maxs : (o->quick ? 120 : 240);
    if (o->out == NULL) o->out = o->quick ? "build/bench-quick" : "build/bench";

    if (o->gpu)
        gpu_part(&s);
    else
        fprintf(stderr, "GPU part skipped: --no-gpu\n");
    if (o->cpu)
        cpu_part(&s);
    else
        fprintf(stderr, "OpenMP part skipped: --no-cpu\n");

    int rc = ffnn_bench_failed_rows(&s.run) > 0;
    if (ffnn_bench_save(&s.run, o->out, csv_header, csv_row, write_table, &s, rc,
                        "SOME CONFIGURATIONS FAILED") != 0)
        rc = 1;
    ffnn_bench_end(&s.run);
    return rc;
}
