/*
 * bench_util.h - the few CUDA runtime services the benchmarks (ffnn bench ...) need,
 * as a C API: device query, device memory, a device-side random fill, streams,
 * events, CUDA-graph capture, and the device-to-device copy ceiling.
 *
 * Implemented in src/cuda/bench_util.cu; in a build without nvcc every function
 * returns FFNN_ERR_UNSUPPORTED (src/cuda_none.c). Pointers to device memory are
 * plain pointers; streams, events and graphs are opaque void * (cudaStream_t,
 * cudaEvent_t, cudaGraphExec_t). Every failure records a message naming the file,
 * line and CUDA call (ffnn_last_error()).
 */
#ifndef FFNN_BENCH_UTIL_H
#define FFNN_BENCH_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "ffnn.h"

#ifdef __CUDACC__
#define FFNN_BENCH_HD __host__ __device__
#else
#define FFNN_BENCH_HD
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ random values */

/* splitmix64's finaliser. */
static inline FFNN_BENCH_HD uint64_t ffnn_bench_mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Element i of the counter-based uniform stream `seed`: lo + (hi - lo) u with u one of
 * the 2^24 floats k/2^24 in [0, 1). The same on host and device up to the rounding
 * of the last multiply-add (the benchmark reads device values back, never
 * regenerates them). */
static inline FFNN_BENCH_HD float ffnn_bench_uniform_at(uint64_t seed, uint64_t i, float lo,
                                                        float hi)
{
    uint64_t h = ffnn_bench_mix64(ffnn_bench_mix64(seed) + i);
    float u = (float)(h >> 40) * (1.0f / 16777216.0f);
    return lo + (hi - lo) * u;
}

/* ------------------------------------------------------------ device */

typedef struct ffnn_bench_gpu_info {
    char name[256];      /* e.g. "NVIDIA H200"                       */
    int cc_major, cc_minor;
    int sm_count;
    size_t l2_bytes;     /* L2 cache                                 */
    size_t total_bytes;  /* device memory                            */
    size_t free_bytes;   /* free now (cudaMemGetInfo)                */
} ffnn_bench_gpu_info;

/* Device 0: FFNN_ERR_UNSUPPORTED when the build has no CUDA or no GPU is present. */
ffnn_status ffnn_bench_gpu_query(ffnn_bench_gpu_info *info);
ffnn_status ffnn_bench_mem_info(size_t *free_bytes, size_t *total_bytes);

ffnn_status ffnn_bench_malloc(void **p, size_t bytes);
void ffnn_bench_free(void *p); /* NULL is fine */
ffnn_status ffnn_bench_memset(void *p, int byte, size_t bytes); /* synchronous */
ffnn_status ffnn_bench_upload(void *dst, const void *src, size_t bytes);
ffnn_status ffnn_bench_download(void *dst, const void *src, size_t bytes);
/* p[i] = ffnn_bench_uniform_at(seed, i, lo, hi) for i < n, on the device; synchronous. */
ffnn_status ffnn_bench_fill_uniform(float *p, size_t n, uint64_t seed, float lo, float hi);

/* ------------------------------------------------------------ streams, events, graphs */

ffnn_status ffnn_bench_stream_create(void **stream); /* non-blocking stream */
void ffnn_bench_stream_destroy(void *stream);
ffnn_status ffnn_bench_stream_sync(void *stream);

ffnn_status ffnn_bench_event_create(void **event);
void ffnn_bench_event_destroy(void *event);
ffnn_status ffnn_bench_event_record(void *event, void *stream);
/* Waits for stop, then *ms = time from start to stop. */
ffnn_status ffnn_bench_event_elapsed_ms(void *start, void *stop, float *ms);

/* Capture the work queued on stream between begin and end into a CUDA graph and
 * instantiate it (*graph_exec). When a call between the two failed, call
 * ffnn_bench_capture_abort instead of _end: it ends the capture and drops the graph. */
ffnn_status ffnn_bench_capture_begin(void *stream);
ffnn_status ffnn_bench_capture_end(void *stream, void **graph_exec);
void ffnn_bench_capture_abort(void *stream);
ffnn_status ffnn_bench_graph_launch(void *graph_exec, void *stream);
void ffnn_bench_graph_destroy(void *graph_exec);

/* ------------------------------------------------------------ ceilings */

/* The device-to-device copy ceiling: cudaMemcpyAsync of a `bytes` buffer (filled
 * with random values) into another, `warmup` untimed copies then `repeats` copies
 * each timed with events. *median_s: the median seconds of one copy; *bytes_per_s:
 * 2 * bytes (read + written) / median. */
ffnn_status ffnn_bench_copy_ceiling(size_t bytes, int warmup, int repeats, double *median_s,
                                    double *bytes_per_s);

/* ------------------------------------------------------------ seed 004 */

/* The cudaStream_t (as void *) of a cuda backend context (ffnn_cuda_backend()->create),
 * so that events and ffnn_bench_gpu_spin can be queued on it; NULL without CUDA. */
void *ffnn_bench_backend_stream(void *cuda_ctx);

/* Queue a kernel on stream that keeps one thread busy for about `microseconds` (SM
 * clock cycles): work queued behind it then runs back to back, so events around it
 * time the GPU rather than the host's launches. src/cuda/reduce_lab.cu. */
ffnn_status ffnn_bench_gpu_spin(void *stream, double microseconds);

/* The reduction lab (src/cuda/reduce_lab.cu): *out (device float) = the sum over
 * b < B of the softmax cross-entropy of logits [B, C] (device) against labels [B]
 * (device uint8), computed by one of three variants: atomic (per-row loss, atomicAdd
 * into *out after a cudaMemsetAsync), tree (one block of 1024 threads, shared-memory
 * tree), shuffle (one block of 1024 threads, warp shuffles). Queued on stream. */
enum { FFNN_REDUCE_ATOMIC = 0, FFNN_REDUCE_TREE = 1, FFNN_REDUCE_SHUFFLE = 2,
       FFNN_REDUCE_VARIANTS = 3 };
const char *ffnn_reduce_lab_name(int variant);
ffnn_status ffnn_reduce_lab_ce_sum(int variant, const float *logits, const uint8_t *labels,
                                   int B, int C, float *out, void *stream);

#ifdef __cplusplus
}
#endif
#endif
