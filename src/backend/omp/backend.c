/* backend.c - the omp table, lifetime and memory: the cpu backend's host memory,
 * with every op (in the file of its name: dense.c, update.c, ...) split over the
 * threads of the context's own pool (core/pool.h: threads - 1 workers beside the
 * caller; static splits, one contiguous range of items per thread: ffnn_omp_run).
 * Not OpenMP's teams: their waiting threads spin 300,000 polls by default and, on a
 * machine busy with other work, take the cores their partners need unless the user
 * sets GOMP_SPINCOUNT; the pool's workers spin briefly, then sleep, with no setting
 * (docs/PERFORMANCE.md "Waiting policy"). OpenMP only counts the cores
 * (omp_get_max_threads(), so OMP_NUM_THREADS still sets the default).
 *
 * Work split and determinism: the matmuls split C into micro-tiles, the
 * element-wise ops into fixed chunks of elements, the loss and the gather into
 * rows, db into columns. Every output value is computed by one thread, in an
 * order that does not depend on which thread or how many (no atomics, no
 * reductions across threads), so a run gives the same bits for any thread count
 * on the same machine (same instruction set: omp_kernels.h). Against the
 * reference, only the matmuls differ (fma and the reference's own summation
 * order): tests/test_omp.c states the tolerances. Ops smaller than a threshold
 * run on the calling thread (a parallel region costs a few microseconds).
 *
 * Built without OpenMP (make OMP_CFLAGS=), the same code runs on one thread.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "backend/backend.h"
#include "backend/cpu/cpu_math.h"
#include "backend/cpu/cpu_ops.h"
#include "core/error.h"
#include "omp_kernels.h"

ffnn_status ffnn_omp_create_with(int threads, const ffnn_omp_gemm_isa *isa, void **out)
{
    if (!out)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "omp create: out is NULL");
    if (threads < 0)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "omp create: threads must be 0 (all cores) or positive, found %d",
                         threads);
    if (!isa) {
        ffnn_status st = ffnn_omp_gemm_select(&isa);
        if (st != FFNN_OK)
            return st;
    }
    ffnn_omp_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "omp create: out of memory");
#ifdef _OPENMP
    ctx->threads = threads == 0 ? omp_get_max_threads() : threads;
#else
    ctx->threads = 1;
#endif
    if (ctx->threads < 1)
        ctx->threads = 1;
    ctx->isa = isa;
    if (ctx->threads > 1) {
        ffnn_status st = ffnn_pool_create(ctx->threads - 1, &ctx->pool);
        if (st != FFNN_OK) {
            free(ctx);
            return st;
        }
    }
    *out = ctx;
    return FFNN_OK;
}

typedef struct range_job {
    ffnn_omp_range_fn fn;
    void *user;
    size_t items, nt;
} range_job;

static void range_member(void *vjob, int k)
{
    const range_job *j = vjob;
    const size_t id = (size_t)k;
    const size_t begin = j->items * id / j->nt, end = j->items * (id + 1) / j->nt;
    if (begin < end)
        j->fn(j->user, begin, end, id);
}

void ffnn_omp_run(const ffnn_omp_ctx *ctx, int nt, size_t items, ffnn_omp_range_fn fn,
                  void *user)
{
    if (nt > ctx->threads)
        nt = ctx->threads;
    if ((size_t)nt > items)
        nt = (int)items;
    if (nt <= 1 || !ctx->pool) {
        if (items)
            fn(user, 0, items, 0);
        return;
    }
    range_job j = {fn, user, items, (size_t)nt};
    ffnn_pool_run(ctx->pool, nt, range_member, &j);
}

typedef struct block_job {
    ffnn_omp_chunk_fn fn;
    void *user;
    size_t n, per;
} block_job;

static void block_range(void *vjob, size_t begin, size_t end, size_t id)
{
    (void)id;
    const block_job *j = vjob;
    for (size_t c = begin; c < end; c++) {
        const size_t b = c * j->per;
        j->fn(j->user, c, b, j->n - b < j->per ? j->n : b + j->per);
    }
}

void ffnn_omp_for_blocks(const ffnn_omp_ctx *ctx, int nt, size_t n, size_t per,
                         ffnn_omp_chunk_fn fn, void *user)
{
    block_job j = {fn, user, n, per};
    ffnn_omp_run(ctx, nt, ffnn_omp_ceil_div(n, per), block_range, &j);
}

void ffnn_omp_for_chunks(const ffnn_omp_ctx *ctx, size_t n, ffnn_omp_chunk_fn fn, void *user)
{
    const size_t chunks = ffnn_omp_ceil_div(n, FFNN_OMP_ELEMENTWISE_CHUNK);
    ffnn_omp_for_blocks(ctx, ffnn_omp_team(ctx, chunks, 2), n, FFNN_OMP_ELEMENTWISE_CHUNK, fn,
                        user);
}

static int ompb_threads(const void *ctx) { return ((const ffnn_omp_ctx *)ctx)->threads; }
const ffnn_omp_gemm_isa *ffnn_omp_isa(const void *ctx) { return ((const ffnn_omp_ctx *)ctx)->isa; }

static ffnn_status ompb_create(const ffnn_backend_options *options, void **ctx)
{
    /* one kind of kernel: options.matmul and the launch shapes do not apply */
    return ffnn_omp_create_with(options ? options->threads : 0, NULL, ctx);
}

static void ompb_destroy(void *vctx)
{
    ffnn_omp_ctx *ctx = vctx;
    if (!ctx)
        return;
    ffnn_pool_free(ctx->pool);
    free(ctx->pack);
    free(ctx);
}

/* 64-byte aligned blocks (whole vectors, whole cache lines). */
static ffnn_status ompb_alloc(void *ctx, size_t bytes, void **ptr)
{
    (void)ctx;
    size_t rounded = (bytes + 63) / 64 * 64;
    if (rounded < bytes)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "omp backend: %zu bytes is too large", bytes);
    *ptr = aligned_alloc(64, rounded ? rounded : 64);
    if (!*ptr)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "omp backend: allocation of %zu bytes failed",
                         bytes);
    return FFNN_OK;
}

/* The packing buffer, at least `floats` long. */
ffnn_status ffnn_omp_reserve_pack(ffnn_omp_ctx *ctx, size_t floats)
{
    if (floats <= ctx->pack_floats)
        return FFNN_OK;
    if (floats > SIZE_MAX / sizeof(float) - 64)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "omp backend: packing buffer too large");
    float *p = aligned_alloc(64, (floats * sizeof(float) + 63) / 64 * 64);
    if (!p)
        return ffnn_fail(FFNN_ERR_NO_MEMORY,
                         "omp backend: out of memory for a %zu-float packing buffer", floats);
    free(ctx->pack);
    ctx->pack = p;
    ctx->pack_floats = floats;
    return FFNN_OK;
}

static const ffnn_ops_packed omp_packed = {
    .dense_pack_floats = ffnn_omp_dense_pack_floats,
    .dense_pack = ffnn_omp_dense_pack,
    .dense_forward_packed = ffnn_omp_dense_forward_packed,
    .dense_forward_packed_part = ffnn_omp_dense_forward_packed_part,
};

static const ffnn_ops_weights omp_weights = {
    .loss_weights = ffnn_omp_loss_weights,
};

/* The table; the ops are in the files of their names (dense.c, update.c, ...). */
const ffnn_backend_ops ffnn_omp_backend = {
    .name = "omp",
    .caps = FFNN_CAP_THREADS,
    .create = ompb_create,
    .destroy = ompb_destroy,
    .threads = ompb_threads,
    .alloc = ompb_alloc,
    .release = ffnn_cpu_host_release, /* host memory, as the cpu backend's */
    .upload = ffnn_cpu_host_copy,
    .download = ffnn_cpu_host_copy,
    .synchronize = ffnn_cpu_host_synchronize,
    .gather = ffnn_omp_gather,
    .dense_forward = ffnn_omp_dense_forward,
    .dense_backward = ffnn_omp_dense_backward,
    .local1d_forward = ffnn_omp_local1d_forward,
    .local1d_backward = ffnn_omp_local1d_backward,
    .embedding_forward = ffnn_omp_embedding_forward,
    .embedding_backward = ffnn_omp_embedding_backward,
    .activation_forward = ffnn_omp_activation_forward,
    .activation_backward = ffnn_omp_activation_backward,
    .loss = ffnn_omp_loss,
    .optimizer_update = ffnn_omp_optimizer_update,
    .grad_clip = ffnn_omp_grad_clip,
    .dropout = ffnn_omp_dropout,
    .ema_update = ffnn_omp_ema_update,
    .packed = &omp_packed,
    .weights = &omp_weights,
};
