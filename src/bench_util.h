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

/* ------------------------------------------------------------ grid barrier */

/* Cost of one grid-wide barrier (src/cuda/persistent.cu): `blocks` blocks of 256
 * threads (0: one per SM; *blocks_used says how many), `iters` barriers in one
 * cooperative launch, median of 5 launches: *us_ours for the persistent kernel's
 * counter barrier, *us_cg for cooperative_groups' grid.sync(). */
ffnn_status ffnn_cuda_bench_grid_barrier(int blocks, int iters, int *blocks_used,
                                         double *us_ours, double *us_cg);

/* ------------------------------------------------------------ matmul lab */

/* The kernel lab of `ffnn bench kernels` (src/cuda/matmul_lab.cu): the three
 * matmuls of a dense layer (op: forward z = x W^T; weight_grad dW = dz^T x;
 * input_grad dx = dz W) in six variants (naive and tiled: dense.cu's kernels;
 * transposed: one thread per output with operands made coalesced, transpose
 * included; regblock: gemm.cu's register-blocked SGEMM; fused: gemm.cu with the
 * layer's epilogue - forward relu(x W^T + b), weight_grad dW + db + SGD on Wp/bp,
 * input_grad (dz W) * relu'(x); cublas: cublasSgemm, FP32 default math). */
enum { FFNN_MM_NAIVE = 0, FFNN_MM_TILED = 1, FFNN_MM_TRANSPOSED = 2, FFNN_MM_REGBLOCK = 3,
       FFNN_MM_FUSED = 4, FFNN_MM_CUBLAS = 5, FFNN_MM_VARIANTS = 6 };
enum { FFNN_MM_FORWARD = 0, FFNN_MM_DW = 1, FFNN_MM_DX = 2, FFNN_MM_OPS = 3 };

/* One call's operands, all device pointers. */
typedef struct ffnn_matmul_lab_args {
    int op;                  /* FFNN_MM_FORWARD / _DW / _DX                          */
    size_t batch, in, out;   /* the layer                                            */
    const float *x;          /* [batch, in]                                          */
    const float *W;          /* [out, in]                                            */
    const float *b;          /* [out] (fused forward)                                */
    const float *dz;         /* [batch, out]                                         */
    float *C;                /* the result: z [batch,out] / dW [out,in] / dx [batch,in] */
    float *db;               /* [out] (fused weight_grad)                            */
    float *Wp, *bp;          /* [out, in], [out]: updated by fused weight_grad's SGD */
    float lr;                /* its learning rate                                    */
    float *scratch;          /* [out * in] (transposed forward)                      */
    float *dW_scratch;       /* [out, in] (naive / tiled input_grad)                 */
} ffnn_matmul_lab_args;

const char *ffnn_matmul_lab_variant_name(int variant);
const char *ffnn_matmul_lab_op_name(int op);
/* A lab: a cuda backend context (one stream) and a cuBLAS handle on it. */
ffnn_status ffnn_matmul_lab_create(void **lab);
void ffnn_matmul_lab_destroy(void *lab);
/* The lab's stream (cudaStream_t as void *): time its calls with events there. */
void *ffnn_matmul_lab_stream(void *lab);
/* Queue one variant of one op. *with_dw (may be NULL) = 1 when the launch also
 * computed dW (naive / tiled input_grad: dense.cu runs dx only with dW). */
ffnn_status ffnn_matmul_lab_run(void *lab, int variant, const ffnn_matmul_lab_args *a,
                                int *with_dw);
/* The regblock tile configuration chosen for op on this layer ("64x64x16" ...). */
const char *ffnn_matmul_lab_config(void *lab, int op, size_t batch, size_t in, size_t out);

#ifdef __cplusplus
}
#endif
#endif
