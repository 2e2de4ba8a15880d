/* cuda_none.c - stands in for src/cuda/ in a build without nvcc: the library then
 * has the CPU backend only, and says so through these queries. */
#include <stddef.h>

#include "backend/backend.h"
#include "bench_util.h"
#include "core/error.h"
#include "ffnn.h"

const ffnn_backend_ops *ffnn_cuda_backend(void) { return NULL; }

ffnn_status ffnn_cuda_set_launch(void *ctx, int block_1d, int block_2d)
{
    (void)ctx, (void)block_1d, (void)block_2d;
    return ffnn_fail(FFNN_ERR_UNSUPPORTED,
                     "cuda launch shapes: this build has no CUDA (nvcc was not found)");
}

int ffnn_has_cuda(void) { return 0; }

int ffnn_cuda_device_count(void) { return 0; }

void ffnn_cuda_device_name(char *buf, size_t buf_size)
{
    if (buf != NULL && buf_size > 0) buf[0] = '\0';
}

/* The benchmarks' CUDA services (bench_util.h): none without CUDA. */
#define FFNN_BENCH_NONE(what) \
    ffnn_fail(FFNN_ERR_UNSUPPORTED, "%s: this build has no CUDA (nvcc was not found)", what)

ffnn_status ffnn_bench_gpu_query(ffnn_bench_gpu_info *info)
{
    (void)info;
    return FFNN_BENCH_NONE("gpu query");
}
ffnn_status ffnn_bench_mem_info(size_t *f, size_t *t)
{
    (void)f, (void)t;
    return FFNN_BENCH_NONE("mem info");
}
ffnn_status ffnn_bench_malloc(void **p, size_t b)
{
    if (p) *p = NULL;
    (void)b;
    return FFNN_BENCH_NONE("malloc");
}
void ffnn_bench_free(void *p) { (void)p; }
ffnn_status ffnn_bench_memset(void *p, int v, size_t b)
{
    (void)p, (void)v, (void)b;
    return FFNN_BENCH_NONE("memset");
}
ffnn_status ffnn_bench_upload(void *d, const void *s, size_t b)
{
    (void)d, (void)s, (void)b;
    return FFNN_BENCH_NONE("upload");
}
ffnn_status ffnn_bench_download(void *d, const void *s, size_t b)
{
    (void)d, (void)s, (void)b;
    return FFNN_BENCH_NONE("download");
}
ffnn_status ffnn_bench_fill_uniform(float *p, size_t n, uint64_t s, float lo, float hi)
{
    (void)p, (void)n, (void)s, (void)lo, (void)hi;
    return FFNN_BENCH_NONE("fill");
}
ffnn_status ffnn_bench_stream_create(void **s)
{
    if (s) *s = NULL;
    return FFNN_BENCH_NONE("stream");
}
void ffnn_bench_stream_destroy(void *s) { (void)s; }
ffnn_status ffnn_bench_stream_sync(void *s)
{
    (void)s;
    return FFNN_BENCH_NONE("stream sync");
}
ffnn_status ffnn_bench_event_create(void **e)
{
    if (e) *e = NULL;
    return FFNN_BENCH_NONE("event");
}
void ffnn_bench_event_destroy(void *e) { (void)e; }
ffnn_status ffnn_bench_event_record(void *e, void *s)
{
    (void)e, (void)s;
    return FFNN_BENCH_NONE("event record");
}
ffnn_status ffnn_bench_event_elapsed_ms(void *a, void *b, float *ms)
{
    (void)a, (void)b, (void)ms;
    return FFNN_BENCH_NONE("event elapsed");
}
ffnn_status ffnn_bench_capture_begin(void *s)
{
    (void)s;
    return FFNN_BENCH_NONE("graph capture");
}
ffnn_status ffnn_bench_capture_end(void *s, void **g)
{
    (void)s;
    if (g) *g = NULL;
    return FFNN_BENCH_NONE("graph capture");
}
void ffnn_bench_capture_abort(void *s) { (void)s; }
ffnn_status ffnn_bench_graph_launch(void *g, void *s)
{
    (void)g, (void)s;
    return FFNN_BENCH_NONE("graph launch");
}
void ffnn_bench_graph_destroy(void *g) { (void)g; }
ffnn_status ffnn_bench_copy_ceiling(size_t b, int w, int r, double *m, double *bps)
{
    (void)b, (void)w, (void)r, (void)m, (void)bps;
    return FFNN_BENCH_NONE("copy ceiling");
}

void *ffnn_bench_backend_stream(void *ctx)
{
    (void)ctx;
    return NULL;
}
ffnn_status ffnn_bench_gpu_spin(void *s, double us)
{
    (void)s, (void)us;
    return FFNN_BENCH_NONE("gpu spin");
}
const char *ffnn_reduce_lab_name(int variant)
{
    return variant == FFNN_REDUCE_ATOMIC    ? "atomic"
           : variant == FFNN_REDUCE_TREE    ? "shared_tree"
           : variant == FFNN_REDUCE_SHUFFLE ? "warp_shuffle"
                                            : "?";
}
ffnn_status ffnn_reduce_lab_ce_sum(int v, const float *z, const uint8_t *y, int B, int C,
                                   float *out, void *s)
{
    (void)v, (void)z, (void)y, (void)B, (void)C, (void)out, (void)s;
    return FFNN_BENCH_NONE("reduce lab");
}

const char *ffnn_matmul_lab_variant_name(int variant)
{
    static const char *const names[] = {"naive", "tiled", "transposed", "regblock", "fused",
                                        "cublas"};
    return variant >= 0 && variant < FFNN_MM_VARIANTS ? names[variant] : "?";
}
const char *ffnn_matmul_lab_op_name(int op)
{
    static const char *const names[] = {"forward", "weight_grad", "input_grad"};
    return op >= 0 && op < FFNN_MM_OPS ? names[op] : "?";
}
ffnn_status ffnn_matmul_lab_create(void **lab)
{
    if (lab) *lab = NULL;
    return FFNN_BENCH_NONE("matmul lab");
}
void ffnn_matmul_lab_destroy(void *lab) { (void)lab; }
void *ffnn_matmul_lab_stream(void *lab)
{
    (void)lab;
    return NULL;
}
ffnn_status ffnn_matmul_lab_run(void *lab, int v, const ffnn_matmul_lab_args *a, int *w)
{
    (void)lab, (void)v, (void)a;
    if (w) *w = 0;
    return FFNN_BENCH_NONE("matmul lab");
}
const char *ffnn_matmul_lab_config(void *lab, int op, size_t b, size_t i, size_t o)
{
    (void)lab, (void)op, (void)b, (void)i, (void)o;
    return "-";
}

ffnn_status ffnn_local1d_forward_cuda(ffnn_local1d_variant variant, void *stream,
                                      const float *x, const float *W, const float *bias,
                                      float *z, size_t batch, size_t N, size_t R,
                                      ffnn_local1d_padding padding, ffnn_activation act)
{
    (void)variant, (void)stream, (void)x, (void)W, (void)bias, (void)z, (void)batch;
    (void)N, (void)R, (void)padding, (void)act;
    return ffnn_fail(FFNN_ERR_UNSUPPORTED,
                     "ffnn_local1d_forward_cuda: this build of ffnn has no CUDA (nvcc was "
                     "not found at build time)");
}

ffnn_status ffnn_cuda_set_precision(void *ctx, ffnn_precision precision)
{
    (void)ctx, (void)precision;
    return ffnn_fail(FFNN_ERR_UNSUPPORTED,
                     "cuda precision: this build has no CUDA (nvcc was not found)");
}

int ffnn_cuda_persistent_supported(void *ctx, const ffnn_persistent_job *job)
{
    (void)ctx, (void)job;
    ffnn_fail(FFNN_ERR_UNSUPPORTED, "cuda persistent: this build has no CUDA");
    return 0;
}

ffnn_status ffnn_cuda_bench_grid_barrier(int blocks, int iters, int *blocks_used,
                                         double *us_ours, double *us_cg)
{
    (void)blocks, (void)iters, (void)blocks_used, (void)us_ours, (void)us_cg;
    return ffnn_fail(FFNN_ERR_UNSUPPORTED, "grid barrier: this build has no CUDA");
}
