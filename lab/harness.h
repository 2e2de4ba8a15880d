/*
 * harness.h - the kernel lab's one harness, shared by every op of the lab (its .cu files)
 * and by the benchmark suites (bench/): check a result against its reference, then
 * time it.
 *
 *   check   ffnn_lab_check: got against want with a stated tolerance (absolute +
 *           relative to the largest |want|, optionally a range), the first 10 faults
 *           printed with their place, then it stops              (harness_host.c)
 *   time    ffnn_lab_time: CUDA events on a stream, warm-up calls, optionally a spin
 *           kernel queued ahead so that the calls run back to back on the GPU, several
 *           calls per sample, the median (and min, max) of the samples     (harness.cu)
 *   rates   ffnn_lab_rate / ffnn_lab_pct: GFLOP/s, GB/s and % of a ceiling
 *   device  device query, memory, a device-side random fill, streams, events, CUDA
 *           graphs, the device-to-device copy ceiling                      (harness.cu)
 *   backend ffnn_lab_backend_create: the one place where the lab and the benchmarks
 *           create a backend context                                  (harness_host.c)
 *
 * harness_host.c is plain C and built in every build; harness.cu and the ops' .cu files
 * only with nvcc: code that calls them is compiled under FFNN_HAVE_CUDA (the Makefile
 * defines it when nvcc is found). Device pointers are plain pointers; streams, events
 * and graphs are opaque void * (cudaStream_t, cudaEvent_t, cudaGraphExec_t). Every
 * failure returns a status with a message naming the file, line and CUDA call
 * (ffnn_last_error()).
 */
#ifndef FFNN_LAB_HARNESS_H
#define FFNN_LAB_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "ffnn.h"

#ifdef __CUDACC__
#define FFNN_LAB_HD __host__ __device__
#else
#define FFNN_LAB_HD
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ random values */

/* splitmix64's finaliser. */
static inline FFNN_LAB_HD uint64_t ffnn_lab_mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Element i of the counter-based uniform stream `seed`: lo + (hi - lo) u with u one of
 * the 2^24 floats k/2^24 in [0, 1). The same on host and device up to the rounding
 * of the last multiply-add (the lab reads device values back, never regenerates
 * them). */
static inline FFNN_LAB_HD float ffnn_lab_uniform_at(uint64_t seed, uint64_t i, float lo, float hi)
{
    uint64_t h = ffnn_lab_mix64(ffnn_lab_mix64(seed) + i);
    float u = (float)(h >> 40) * (1.0f / 16777216.0f);
    return lo + (hi - lo) * u;
}

/* ------------------------------------------------------------ check (harness_host.c) */

#define FFNN_LAB_MAX_FAULTS 10

/* A value got[i] is a fault when it is not finite, lies outside [lo, hi] (lo > hi:
 * no range), or |got - want| > atol + rtol * max_j |want[j]| (normwise: rtol is
 * relative to the largest reference value). */
typedef struct ffnn_lab_tolerance {
    double atol, rtol;
    double lo, hi;
} ffnn_lab_tolerance;

typedef struct ffnn_lab_check_result {
    size_t faults;            /* faults found (the scan stops at FFNN_LAB_MAX_FAULTS) */
    size_t first;             /* index i of the first fault                          */
    double first_got, first_want;
    double max_abs;           /* max |got - want| over the values scanned            */
    double max_rel;           /* max_abs / max |want| (max_abs when want is all 0)   */
} ffnn_lab_check_result;

/* Compare n values: got[idx[i]] (idx NULL: got[i]) against want[i]. Each fault up to
 * the 10th is printed to stderr ("    what[i]: got G, want W"); the scan stops at
 * the 10th. res (may be NULL) gets the summary. Returns the faults (0: passed). */
size_t ffnn_lab_check(const char *what, const float *got, const float *want,
                      const size_t *idx, size_t n, const ffnn_lab_tolerance *tol,
                      ffnn_lab_check_result *res);

/* ------------------------------------------------------------ statistics, rates */

/* Sorts v[0..n) (n >= 1) and returns its median; *lo, *hi (may be NULL): min, max. */
double ffnn_lab_median(double *v, size_t n, double *lo, double *hi);

/* amount / seconds (FLOP, bytes, outputs per second); NaN unless seconds > 0. */
double ffnn_lab_rate(double amount, double seconds);
/* 100 rate / ceiling; NaN unless ceiling > 0. */
double ffnn_lab_pct(double rate, double ceiling);

/* ------------------------------------------------------------ backend contexts */

/* The one place where the lab and the benchmarks create a backend context: ops's
 * create with the plain matmul ops on `matmul`, `threads` host threads (0: all), the
 * other options at their defaults (fp32, default launch shapes). ops NULL (no CUDA
 * in the build): FFNN_ERR_UNSUPPORTED. */
ffnn_status ffnn_lab_backend_create(const ffnn_backend_ops *ops, ffnn_matmul_variant matmul,
                                    int threads, void **ctx);

/* ------------------------------------------------------------ device (harness.cu) */

typedef struct ffnn_lab_gpu_info {
    char name[256];      /* e.g. "NVIDIA H200"                       */
    int cc_major, cc_minor;
    int sm_count;
    size_t l2_bytes;     /* L2 cache                                 */
    size_t total_bytes;  /* device memory                            */
    size_t free_bytes;   /* free now (cudaMemGetInfo)                */
} ffnn_lab_gpu_info;

/* Device 0: FFNN_ERR_UNSUPPORTED when no GPU is present. */
ffnn_status ffnn_lab_gpu_query(ffnn_lab_gpu_info *info);
ffnn_status ffnn_lab_mem_info(size_t *free_bytes, size_t *total_bytes);

ffnn_status ffnn_lab_malloc(void **p, size_t bytes);
void ffnn_lab_free(void *p); /* NULL is fine */
ffnn_status ffnn_lab_memset(void *p, int byte, size_t bytes); /* synchronous */
ffnn_status ffnn_lab_upload(void *dst, const void *src, size_t bytes);
ffnn_status ffnn_lab_download(void *dst, const void *src, size_t bytes);
/* p[i] = ffnn_lab_uniform_at(seed, i, lo, hi) for i < n, on the device; synchronous. */
ffnn_status ffnn_lab_fill_uniform(float *p, size_t n, uint64_t seed, float lo, float hi);

ffnn_status ffnn_lab_stream_create(void **stream); /* non-blocking stream */
void ffnn_lab_stream_destroy(void *stream);
ffnn_status ffnn_lab_stream_sync(void *stream);
/* The stream of a cuda backend context (ffnn_lab_backend_create with the cuda ops). */
void *ffnn_lab_backend_stream(void *cuda_ctx);

ffnn_status ffnn_lab_event_create(void **event);
void ffnn_lab_event_destroy(void *event);

/* Capture the work queued on stream between begin and end into a CUDA graph and
 * instantiate it (*graph_exec). When a call between the two failed, call
 * ffnn_lab_capture_abort instead of _end: it ends the capture and drops the graph. */
ffnn_status ffnn_lab_capture_begin(void *stream);
ffnn_status ffnn_lab_capture_end(void *stream, void **graph_exec);
void ffnn_lab_capture_abort(void *stream);
ffnn_status ffnn_lab_graph_launch(void *graph_exec, void *stream);
void ffnn_lab_graph_destroy(void *graph_exec);

/* ------------------------------------------------------------ timing (harness.cu) */

/* Queue one call of the thing timed on the stream given to ffnn_lab_time. */
typedef ffnn_status (*ffnn_lab_launch_fn)(void *arg);

typedef struct ffnn_lab_timing {
    int warmup;        /* untimed calls first, then the stream is synchronised      */
    int repeats;       /* timed samples (>= 1)                                       */
    int inner;         /* calls per sample; 0: as many as make about target_us of GPU
                          time (one call timed alone first), 1..max_inner          */
    double target_us;  /* see inner                                                  */
    int max_inner;
    double spin_us;    /* > 0: a kernel that keeps the GPU busy this long is queued
                          ahead of every sample, so that the host queues the sample's
                          calls before the GPU reaches them: the events then time
                          the calls back to back, not the host's launches            */
} ffnn_lab_timing;

typedef struct ffnn_lab_times {
    double median_us, min_us, max_us; /* of one call: a sample's time / inner       */
    int inner;                        /* calls per sample                            */
} ffnn_lab_times;

/* Time launch(arg) on stream with events as t says. */
ffnn_status ffnn_lab_time(void *stream, ffnn_lab_launch_fn launch, void *arg,
                          const ffnn_lab_timing *t, ffnn_lab_times *out);

/* Queue a kernel on stream that keeps one thread busy for about `microseconds` (SM
 * clock cycles). */
ffnn_status ffnn_lab_gpu_spin(void *stream, double microseconds);

/* The device-to-device copy ceiling: cudaMemcpyAsync of a `bytes` buffer (random
 * values) into another, 3 untimed copies, then `repeats` timed one by one.
 * *median_s: the median seconds of one copy; *bytes_per_s: 2 * bytes (read +
 * written) / median. */
ffnn_status ffnn_lab_copy_ceiling(size_t bytes, int repeats, double *median_s,
                                  double *bytes_per_s);

#ifdef __cplusplus
}
#endif
#endif
