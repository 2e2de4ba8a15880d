/* local1d.h - what the parts of `ffnn bench local1d` share (local1d.c: options, rows,
 * checks, the OpenMP part and the suite; local1d_gpu.c: the GPU part; local1d_table.c:
 * the CSV and the table): the options, the result rows, the layer geometry. */
#ifndef FFNN_BENCH_LOCAL1D_H
#define FFNN_BENCH_LOCAL1D_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ffnn.h"
#include "harness.h"

#define MAX_LIST 32
#define CHECK_TOL 1e-5         /* max |out - reference| (outputs are in (0, 1))   */

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

/* the names of regime[], variant[], launch[], NULL-terminated for the option parser */
extern const char *const l1d_regime_names[];  /* unique, reused */
extern const char *const l1d_variant_names[]; /* global, shared */
extern const char *const l1d_launch_names[];  /* stream, graph  */

/* A new result row (all numbers NaN, status empty), of the suite's run. */
row *l1d_new_row(local1d_suite *s, const char *part, const char *variant, const char *launch,
                 const char *regime, const char *device);
const row *l1d_row_at(const local1d_suite *s, size_t i);
/* outputs/s and bytes/s from r->sec, % of the copy ceiling (when > 0). */
void l1d_set_rates(row *r, double ceiling);

/* ------------------------------------------------------------ layer geometry */

/* Output width of layer k (0-based): N - (k+1)(R-1). */
static inline size_t out_width(size_t N, size_t R, int k) { return N - (size_t)(k + 1) * (R - 1); }

/* Outputs of layers 0..k-1: k N - (R-1) k (k+1) / 2. Also the row offset of layer k in
 * the unique-weights arenas (W: R floats per row, bias: 1). */
static inline uint64_t prefix_outputs(size_t N, size_t R, int k)
{
    uint64_t kk = (uint64_t)k;
    return kk * (uint64_t)N - (uint64_t)(R - 1) * kk * (kk + 1) / 2;
}

static inline double bytes_per_output(size_t R, int reused)
{
    return reused ? 8.0 : 4.0 * (double)(R + 1) + 8.0;
}

/* Floats of the weight and bias arenas for K layers. */
static inline uint64_t w_floats(size_t N, size_t R, int K, int reused)
{
    return (uint64_t)R * (reused ? (uint64_t)out_width(N, R, 0) : prefix_outputs(N, R, K));
}
static inline uint64_t b_floats(size_t N, size_t R, int K, int reused)
{
    return reused ? (uint64_t)out_width(N, R, 0) : prefix_outputs(N, R, K);
}

/* x0 + two activation buffers + weights + biases. */
static inline double bytes_needed(size_t N, size_t R, int K, int reused)
{
    return 4.0 * (3.0 * (double)N + (double)w_floats(N, R, K, reused) +
                  (double)b_floats(N, R, K, reused));
}

static inline int valid_depth(size_t N, size_t R, int K) { return (uint64_t)K * (R - 1) < N; }

/* ------------------------------------------------------------ checks */

/* got vs ref over n outputs: every value finite and in [0, 1], max |got - ref| within
 * CHECK_TOL. Returns 0 (*err: the largest difference so far) or -1 with the first bad
 * element in why. */
int l1d_compare_outputs(const float *got, const float *ref, size_t n, double *err,
                        const char *what, char *why, size_t why_size);
/* b bytes as "N B (x.y GB)" (or MB) in buf. */
const char *l1d_fmt_bytes(double b, char *buf, size_t size);
/* 1 when --max-seconds has passed: start no further configuration. */
int l1d_budget_spent(const local1d_suite *s);
/* One line on stderr for a finished row. */
void l1d_print_row_progress(const row *r);

/* The GPU part (local1d_gpu.c): the copy ceiling, then every configuration, as rows
 * (one skipped row in a build or on a machine without CUDA). */
void l1d_gpu_part(local1d_suite *s);

/* The CSV's columns and one row, and the Markdown table (local1d_table.c). */
extern const char *const l1d_csv_header;
void l1d_csv_row(FILE *f, const void *vr, const void *vs);
void l1d_write_table(FILE *f, const void *vs);

#endif
