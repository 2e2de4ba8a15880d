/* omp_kernels.h - the omp backend's internals: its context, the table's entries
 * (backend.h semantics; one file per op: dense.c, local1d.c, activation.c, loss.c,
 * update.c, gather.c) and the serial kernels they run on the threads of the library's pool (core/pool.h).
 *
 * Matmuls (gemm.c, one instance per instruction set, picked at run time):
 * every dense product is one shape of
 *
 *     C[i, j] = sum_{p < P} A(i, p) * B(p, j)  (+ bias[j])       i < M, j < N
 *
 * with A(i, p) = A[i * a_row + p * a_col] (any strides: read one scalar at a
 * time and broadcast) and B read in column panels of nr floats, each row of a
 * panel contiguous. C is cut into micro-tiles of mr x nr; one call of `tile`
 * computes one micro-tile with its mr x nr sums held in vector registers over
 * the whole of P (no K blocking: P is at most a few thousand here), then stores
 * it (a partial tile at the bottom or right edge: only the block of mr / 3,
 * 2 mr / 3 or mr rows and of one vector or nr columns that covers it). Each sum runs over p in order, one (fused, where the instruction set has
 * FMA) multiply-add per p; which thread computes a tile does not change it, so
 * the results do not depend on the thread count.
 *
 *   dense forward   z = x W^T:  A = x (a_row = in, a_col = 1), B = W^T, packed
 *                   panel by panel into [in][nr] (pack_transposed), C = z, bias = b
 *   dense backward  dW = dz^T x: A(o, b) = dz[b, o] (a_row = 1, a_col = out),
 *                   B = x read in place, C = dW
 *                   dx = dz W:   A = dz (a_row = out, a_col = 1), B = W in place
 * The right-edge panel of an in-place B (N % nr != 0) is first copied, zero-
 * padded, into a [P][nr] buffer (pack_edge), so that no load reads past a row;
 * rows of a partial tile past M re-read the last row and are not stored.
 *
 * Element-wise ops (elementwise.c): the reference's per-element formulas (the
 * one copy in src/backend/cpu/cpu_math.h, which the cpu backend calls too), over a
 * range [begin, end) so that threads can split the work, and compiled for several
 * instruction sets (target_clones) so that they vectorise. They give the
 * reference's bits.
 */
#ifndef FFNN_OMP_KERNELS_H
#define FFNN_OMP_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "core/pool.h"

/* One matmul (see above). */
typedef struct ffnn_omp_gemm {
    size_t M, N, P;
    const float *A;         /* A(i, p) = A[i * a_row + p * a_col]                     */
    size_t a_row, a_col;
    const float *B;         /* B(p, j) = B[p * ldb + j] when read in place (else NULL) */
    size_t ldb;
    const float *bias;      /* [N] added to every row, or NULL                         */
    float *C;               /* [M, ldc]                                                */
    size_t ldc;
} ffnn_omp_gemm;

/* Panels one row() call covers. */
#define FFNN_OMP_ROW_PANELS 4

/* The matmul kernels of one instruction set. */
typedef struct ffnn_omp_gemm_isa {
    const char *name; /* "avx512", "avx2", "baseline" */
    size_t mr, nr;    /* micro-tile rows and columns */
    size_t mr_min;    /* batches of fewer rows go row by row (row()): the fewest rows
                         tile() computes with 8 accumulator chains or more (the fma
                         latency) */
    /* The micro-tile of C at rows i0 .. i0+mr, columns j0 .. j0+nr (clipped to M, N),
     * j0 a multiple of nr. panel: NULL to read B in place (nr columns from j0 must be
     * readable: not for the right-edge panel), or B's columns j0 .. j0+nr packed
     * [P][nr] (zero beyond N). */
    void (*tile)(const ffnn_omp_gemm *g, const float *panel, size_t i0, size_t j0);
    /* Row i0 of C over `panels` (1 .. FFNN_OMP_ROW_PANELS) consecutive packed panels
     * [P][nr] starting at packed (column j0): the bits of tile() for that row, for
     * batches smaller than mr_min (one row per call). */
    void (*row)(const ffnn_omp_gemm *g, const float *packed, size_t panels, size_t i0,
                size_t j0);
    /* dst [k][nr] = W[j0 + j, k] for j < min(nr, rows - j0), zero beyond; W [rows, k_len]. */
    void (*pack_transposed)(const float *W, size_t rows, size_t k_len, size_t j0, float *dst);
    /* dst [p][nr] = B[p * ldb + j0 + j] for j < cols - j0 (< nr), zero beyond; p < P:
     * the right-edge panel of a B read in place. */
    void (*pack_edge)(const float *B, size_t P, size_t ldb, size_t cols, size_t j0,
                      float *dst);
} ffnn_omp_gemm_isa;

/* The instances: the best one this CPU runs (avx512 > avx2 > baseline), or by name
 * ("avx512", "avx2", "baseline"; NULL when unknown or not supported here). */
const ffnn_omp_gemm_isa *ffnn_omp_gemm_best(void);
const ffnn_omp_gemm_isa *ffnn_omp_gemm_named(const char *name);
/* The set the omp backend uses: the one FFNN_OMP_ISA names (FFNN_ERR_UNSUPPORTED when
 * this CPU cannot run it, FFNN_ERR_INVALID_ARGUMENT when this build has no such set;
 * the message names the sets), else ffnn_omp_gemm_best(). */
ffnn_status ffnn_omp_gemm_select(const ffnn_omp_gemm_isa **out);

/* ---- element-wise kernels over [begin, end) (elementwise.c) ---- */

/* Rows [begin, end) of gather (backend.h). */
void ffnn_omp_gather_rows(const ffnn_gather_source *src, const int32_t *index, float *x,
                          int32_t *y, float *t, size_t begin, size_t end);
/* param: the activation's parameter (core/activation.h); saved: a = f(z), or z where
 * ffnn_act_grad_from_input(act) (cpu_math.h has the table). */
void ffnn_omp_activation_forward_range(ffnn_activation act, float param, const float *z,
                                       float *a, size_t begin, size_t end);
void ffnn_omp_activation_backward_range(ffnn_activation act, float param, const float *saved,
                                        const float *da, float *dz, size_t begin, size_t end);
/* Columns [begin, end) of db = sum_b dz[b, :] (summed over b in order). */
void ffnn_omp_dense_bias_grad_range(const float *dz, size_t batch, size_t width, float *db,
                                    size_t begin, size_t end);
/* Elements [begin, end) of one optimizer step (n: the arena size, for adam's v = state + n). */
void ffnn_omp_optimizer_update_range(const ffnn_optimizer_step *s, float *params,
                                     const float *grads, float *state, size_t n, size_t begin,
                                     size_t end);

/* ---- local1d.c: the 1-D locally connected layer on `threads` threads (<= 0: all) ---- */

/* backend.h local1d_forward (act fused), the reference's bits (also core/local1d.h's
 * entry point for the benchmark). */
void ffnn_omp_local1d_forward_threads(const float *x, const float *W, const float *bias,
                                      float *z, size_t batch, size_t N, size_t R,
                                      ffnn_local1d_padding padding, ffnn_activation act,
                                      int threads);
/* backend.h local1d_backward, the reference's bits. */
void ffnn_omp_local1d_backward_threads(const float *x, const float *W, const float *dz,
                                       float *dx, float *dW, float *db, size_t batch, size_t N,
                                       size_t R, ffnn_local1d_padding padding, int threads);

/* ---- the backend ---- */

/* Below these sizes an op runs on the calling thread. */
enum {
    FFNN_OMP_ELEMENTWISE_CHUNK = 16384,   /* floats per chunk of an element-wise op (2
                                             chunks: worth a team)                       */
    FFNN_OMP_GEMM_MIN_PARALLEL = 1 << 20, /* multiply-adds (M*N*P) of a matmul worth a team */
    FFNN_OMP_GATHER_MIN_PARALLEL = 16384, /* values (rows * features) of a gather worth one */
    FFNN_OMP_LOSS_MIN_PARALLEL = 16384,   /* values (rows * width) of a loss (expf each)    */
    FFNN_OMP_DB_CHUNK = 1024,             /* columns of db per work item                    */
    FFNN_OMP_BLOCK_BYTES = 1 << 20,       /* packed B panels a matmul keeps in cache (about
                                             half a core's L2) while it sweeps A's rows     */
};

/* An omp context (the table's void *ctx). */
typedef struct ffnn_omp_ctx {
    int threads;                   /* team size of every parallel op          */
    ffnn_pool *pool;               /* threads - 1 workers beside the caller   */
    const ffnn_omp_gemm_isa *isa;  /* matmul kernels                          */
    float *pack;                   /* one slot per thread for packed B panels */
    size_t pack_floats;            /* capacity of pack                        */
} ffnn_omp_ctx;

/* ctx->pack at least `floats` long (backend.c). */
ffnn_status ffnn_omp_reserve_pack(ffnn_omp_ctx *ctx, size_t floats);

static inline size_t ffnn_omp_ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

/* The end of the element-wise chunk that starts at begin (of n values). */
static inline size_t ffnn_omp_chunk_end(size_t n, size_t begin)
{
    return n - begin < FFNN_OMP_ELEMENTWISE_CHUNK ? n : begin + FFNN_OMP_ELEMENTWISE_CHUNK;
}

/* Team size for `work` units of which `min_parallel` are worth a team. */
static inline int ffnn_omp_team(const ffnn_omp_ctx *ctx, size_t work, size_t min_parallel)
{
    return work >= min_parallel ? ctx->threads : 1;
}

/* A range job: fn(user, begin, end, id) runs items [begin, end) on team member id
 * (< the team size: the index of its ctx->pack slot). */
typedef void (*ffnn_omp_range_fn)(void *user, size_t begin, size_t end, size_t id);
/* Items [0, items) split statically over `nt` (<= ctx->threads) members of ctx's pool,
 * member id taking [items * id / nt, items * (id + 1) / nt); the caller is member 0.
 * nt <= 1: fn(user, 0, items, 0) on the calling thread (backend.c). */
void ffnn_omp_run(const ffnn_omp_ctx *ctx, int nt, size_t items, ffnn_omp_range_fn fn,
                  void *user);

/* A chunk job: fn(user, c, begin, end) for chunk number c of an element-wise op. */
typedef void (*ffnn_omp_chunk_fn)(void *user, size_t c, size_t begin, size_t end);
/* An element-wise op over [0, n) in fixed chunks of FFNN_OMP_ELEMENTWISE_CHUNK values,
 * split statically over ctx's team (one thread below 2 chunks): fn once per chunk c
 * with its range [begin, end), so the result is the same for every thread count. */
void ffnn_omp_for_chunks(const ffnn_omp_ctx *ctx, size_t n, ffnn_omp_chunk_fn fn, void *user);
/* The same over [0, n) in blocks of per values (the last one shorter; per >= 1),
 * over a team of nt threads: fn once per block c with its range [begin, end). */
void ffnn_omp_for_blocks(const ffnn_omp_ctx *ctx, int nt, size_t n, size_t per,
                         ffnn_omp_chunk_fn fn, void *user);

/* The table's entries (backend.h states each one's semantics). */
ffnn_status ffnn_omp_gather(void *ctx, const ffnn_gather_source *src, const int32_t *index,
                            size_t batch, float *x, int32_t *y, float *t);
ffnn_status ffnn_omp_dense_forward(void *ctx, const float *x, const float *W, const float *b,
                                   float *z, size_t batch, size_t in, size_t out);
ffnn_status ffnn_omp_dense_backward(void *ctx, const float *x, const float *W, const float *dz,
                                    float *dx, float *dW, float *db, size_t batch, size_t in,
                                    size_t out);
size_t ffnn_omp_dense_pack_floats(void *ctx, size_t in, size_t out);
ffnn_status ffnn_omp_dense_pack(void *ctx, const float *W, size_t in, size_t out, float *packed);
ffnn_status ffnn_omp_dense_forward_packed(void *ctx, const float *x, const float *packed,
                                          const float *b, float *z, size_t batch, size_t in,
                                          size_t out);
ffnn_status ffnn_omp_dense_forward_packed_part(void *ctx, const float *x, const float *packed,
                                               const float *b, float *z, size_t batch,
                                               size_t in, size_t out, int part, int parts,
                                               size_t *j0, size_t *j1);
ffnn_status ffnn_omp_embedding_forward(void *ctx, const float *x, const float *W, float *a,
                                       size_t batch, const ffnn_embedding_spec *spec);
ffnn_status ffnn_omp_embedding_backward(void *ctx, const float *x, const float *dz, float *dW,
                                        size_t batch, const ffnn_embedding_spec *spec);
ffnn_status ffnn_omp_local1d_forward(void *ctx, const float *x, const float *W, const float *b,
                                     float *z, size_t batch, size_t N, size_t R,
                                     ffnn_local1d_padding padding, ffnn_activation act);
ffnn_status ffnn_omp_local1d_backward(void *ctx, const float *x, const float *W,
                                      const float *dz, float *dx, float *dW, float *db,
                                      size_t batch, size_t N, size_t R,
                                      ffnn_local1d_padding padding);
ffnn_status ffnn_omp_activation_forward(void *ctx, ffnn_activation act, float param,
                                        const float *z, float *a, size_t n);
ffnn_status ffnn_omp_activation_backward(void *ctx, ffnn_activation act, float param,
                                         const float *saved, const float *da, float *dz,
                                         size_t n);
ffnn_status ffnn_omp_dropout(void *ctx, const float *in, float *out, size_t n, uint64_t key,
                             uint32_t threshold, float scale);
ffnn_status ffnn_omp_loss(void *ctx, ffnn_loss loss, const float *out, const int32_t *y,
                          const float *targets, size_t batch, size_t width, float *dout,
                          float *row_loss, uint8_t *row_correct);
ffnn_status ffnn_omp_loss_weights(void *ctx, const float *weights, const int32_t *index,
                                  size_t batch, size_t width, float *dout);
ffnn_status ffnn_omp_optimizer_update(void *ctx, const ffnn_optimizer_step *step,
                                      float *params, const float *grads, float *state,
                                      size_t n);
ffnn_status ffnn_omp_grad_clip(void *ctx, float *grads, size_t n, float max_norm,
                               float max_value, float *norm_out);
ffnn_status ffnn_omp_ema_update(void *ctx, float *ema, const float *params, size_t n,
                                float decay, float one_minus_decay);

/* Create an omp context with `threads` threads (0: omp_get_max_threads()) and the
 * given matmul kernels (NULL: ffnn_omp_gemm_select()'s). For tests. */
ffnn_status ffnn_omp_create_with(int threads, const ffnn_omp_gemm_isa *isa, void **ctx);
/* The kernels of a context (its thread count: the table's threads entry). */
const ffnn_omp_gemm_isa *ffnn_omp_isa(const void *ctx);

#endif
