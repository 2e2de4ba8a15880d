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
#include "local1d.h"
#include "suites.h"


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

/* two of each, NULL-terminated for the option parser */
const char *const l1d_regime_names[] = {"unique", "reused", NULL};
const char *const l1d_variant_names[] = {"global", "shared", NULL};
const char *const l1d_launch_names[] = {"stream", "graph", NULL};

row *l1d_new_row(local1d_suite *s, const char *part, const char *variant, const char *launch,
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

const row *l1d_row_at(const local1d_suite *s, size_t i) { return FFNN_BENCH_ROW(&s->run, row, i); }

void l1d_set_rates(row *r, double ceiling)
{
    if (!(r->sec > 0.0)) return;
    r->outputs_per_s = ffnn_lab_rate((double)r->outputs, r->sec);
    r->bytes_per_s = ffnn_lab_rate((double)r->outputs * r->bytes_per_output, r->sec);
    if (ceiling > 0.0) r->pct = ffnn_lab_pct(r->bytes_per_s, ceiling);
}

/* ------------------------------------------------------------ checks */

/* got vs ref over n outputs: every value finite and in [0, 1], max |got - ref| within
 * CHECK_TOL. Returns 0 (*err: the largest difference so far) or -1 with the first bad
 * element in why. */
int l1d_compare_outputs(const float *got, const float *ref, size_t n, double *err,
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

const char *l1d_fmt_bytes(double b, char *buf, size_t size)
{
    if (b >= 1e9)
        snprintf(buf, size, "%.0f B (%.1f GB)", b, b / 1e9);
    else
        snprintf(buf, size, "%.0f B (%.1f MB)", b, b / 1e6);
    return buf;
}

int l1d_budget_spent(const local1d_suite *s)
{
    return ffnn_bench_now_s() - s->run.t_start > s->o.max_seconds;
}

void l1d_print_row_progress(const row *r)
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
    if (l1d_compare_outputs(c->buf[(kc - 1) & 1], ref, mc, &err, what, why, sizeof why) != 0) {
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
    if (l1d_compare_outputs(c->buf[(K - 1) & 1], ref, m, &err, what, why, sizeof why) != 0) {
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
    l1d_set_rates(r, 0.0);
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
                     l1d_fmt_bytes(need, bb, sizeof bb), l1d_fmt_bytes(host_free, fb, sizeof fb));
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
                         l1d_fmt_bytes(need, bb, sizeof bb));
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
                row *r = l1d_new_row(s, part == 0 ? "omp_strong" : "omp_weak", "omp", "",
                                     l1d_regime_names[reg], cs->name);
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
                else if (l1d_budget_spent(s))
                    snprintf(r->status, sizeof r->status,
                             "skipped: time budget (--max-seconds %.0f) spent", o->max_seconds);
                else
                    cpu_config(o, &c, N, K, P, r);
                if (strcmp(r->status, "ok") == 0) {
                    if (isnan(base)) base = r->sec;
                    r->scaling = base / r->sec;
                    cs->ran = 1;
                }
                l1d_print_row_progress(r);
            }
        }
        free(c.x0);
        free(c.buf[0]);
        free(c.buf[1]);
        free(c.W);
        free(c.b);
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
        FFNN_BENCH_OPT_NAMES("regimes", o->regime, l1d_regime_names),
        FFNN_BENCH_OPT_NAMES("variants", o->variant, l1d_variant_names),
        FFNN_BENCH_OPT_NAMES("launch", o->launch, l1d_launch_names),
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
        l1d_gpu_part(&s);
    else
        fprintf(stderr, "GPU part skipped: --no-gpu\n");
    if (o->cpu)
        cpu_part(&s);
    else
        fprintf(stderr, "OpenMP part skipped: --no-cpu\n");

    return ffnn_bench_finish(&s.run, 0, o->out, l1d_csv_header, l1d_csv_row, l1d_write_table,
                             &s, "SOME CONFIGURATIONS FAILED");
}

