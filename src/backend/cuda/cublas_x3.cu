/* cublas_x3.cu - the tf32x3 split of the cublas and cublaslt strategies (file
 * comment: cublas.cu): each fp32 operand as three TF32 parts for a K' = 3K matmul,
 * and backend.h's prepare_xt. */
#include "cublas_state.cuh"

/* ------------------------------------------------------------------ tf32x3 */
/*
 * --precision tf32x3, "3xTF32" (Ootomo & Yokota, "Recovering single precision
 * accuracy from Tensor Cores while surpassing the FP32 theoretical peak
 * performance", IJHPCA 2022; CUTLASS's 3xTF32 GEMMs): fp32's accuracy from the TF32
 * tensor cores. Each fp32 input v is split into two TF32 values
 *     big = tf32(v), small = tf32(v - big)   (mma.cuh's rounding: to nearest, ties
 *                                            away; v - big is exact in fp32)
 * with |v - big - small| <= 2^-22 |v|, and a product as three:
 *     a b ~ a_small b_big + a_big b_small + a_big b_big
 * (a_small b_small <= 2^-22 |a b| dropped): within ~3 2^-22 of |a b| (fp32's
 * rounding: 2^-24), the sums in fp32. The three run as ONE TF32 matmul over
 * K' = 3K, its operands written by ffnn_cublas_tf32x3_split into the scratch:
 *     op(A)' [m, 3K] = [A_small | A_big | A_big],  op(B)' [3K, n] = [B_big; B_small; B_big]
 * small terms first in k, so that they are summed while the running sums are small
 * (a probe on an H200 at the wide net's shapes, git show 6b96639:bench/tf32x3_probe.cu;
 * the largest error as a fraction of sum_k |a_k b_k|: small first 1.9-3.8e-7, big
 * first 1.6-1.8e-6, fp32's COMPUTE_32F 0.5-1.5e-7, TF32 alone 3-4e-5). The split writes both K-major (the
 * reduction index contiguous, as the forward's operands): the 3K launch there took
 * 25-28 us against cuBLASLt fp32's 40-57, the weight gradients' own layout 39-45.
 * The epilogues (bias, ReLU, SGD's alpha and beta) apply as to any matmul; BGRADB
 * does not (op(B)' is not dz: the weight gradient takes DEFAULT and bias_grad).
 * One split is a read of the operand and three writes (16 bytes per element).
 */

/* big = tf32(v) and small = tf32(v - big) into part q of o (q = 0, 1, 2; `part`
 * floats apart): small where bit q of small_mask is set, else big. */
static __device__ __forceinline__ void tf32x3_parts(float v, unsigned small_mask, float *o,
                                                   size_t part)
{
    const float big = __uint_as_float(mma_tf32(v));
    const float small = __uint_as_float(mma_tf32(v - big));
#pragma unroll
    for (int q = 0; q < 3; ++q) o[q * part] = (small_mask >> q) & 1u ? small : big;
}

#define X3_TILE 32 /* the split's tile: 32 x 32 (through shared memory where it transposes) */
#define X3_MAX_BLOCKS 65535u /* blocks per operand; larger operands loop over tiles */

/* One operand's split (tf32x3_parts into part order small_mask): src column-major
 * rows x cols (leading dimension ld); where k is the row, dst [3 rows, cols] (ld 3 rows,
 * each column the three parts' rows in turn); where k is the column (k_is_col),
 * transposed so that it becomes the row (K-major): dst [3 cols, rows] (ld 3 cols),
 * dst[q cols + c, r] = part q of src[r, c]. tiles_r: X3_TILE tiles over rows; tiles:
 * all of them; blocks: the grid's blocks for this operand (<= tiles). */
typedef struct x3_job {
    const float *src;
    float *dst;
    size_t rows, cols, ld;
    unsigned small_mask;
    int k_is_col;
    size_t tiles_r, tiles;
    unsigned blocks;
} x3_job;

/* Both operands of a matmul in one launch (one job with j1.blocks 0): blocks
 * [0, j0.blocks) take j0, the rest j1, each looping over its tiles. Blocks of
 * X3_TILE x 8 threads: x over a tile's rows, reads and writes coalesced (where k
 * is the column: rows on read, columns on write, through shared memory). */
static __global__ void tf32x3_split_kernel(x3_job j0, x3_job j1)
{
    __shared__ float tile[X3_TILE][X3_TILE + 1];
    const int second = blockIdx.x >= j0.blocks;
    const x3_job j = second ? j1 : j0;
    for (size_t t = blockIdx.x - (second ? j0.blocks : 0u); t < j.tiles; t += j.blocks) {
        const size_t r0 = (t % j.tiles_r) * X3_TILE, c0 = (t / j.tiles_r) * X3_TILE;
        if (!j.k_is_col) {
            const size_t r = r0 + threadIdx.x;
            for (int y = threadIdx.y; y < X3_TILE; y += blockDim.y) {
                const size_t c = c0 + y;
                if (r < j.rows && c < j.cols)
                    tf32x3_parts(j.src[c * j.ld + r], j.small_mask,
                                 j.dst + c * 3 * j.rows + r, j.rows);
            }
            continue;
        }
        for (int y = threadIdx.y; y < X3_TILE; y += blockDim.y) {
            const size_t r = r0 + threadIdx.x, c = c0 + y;
            tile[y][threadIdx.x] = r < j.rows && c < j.cols ? j.src[c * j.ld + r] : 0.0f;
        }
        __syncthreads();
        for (int y = threadIdx.y; y < X3_TILE; y += blockDim.y) {
            const size_t r = r0 + y, c = c0 + threadIdx.x;
            if (r < j.rows && c < j.cols)
                tf32x3_parts(tile[threadIdx.x][y], j.small_mask, j.dst + r * 3 * j.cols + c,
                             j.cols);
        }
        __syncthreads();
    }
}

/* The job splitting o (column-major as stored; k its column when k_is_col) into dst. */
static x3_job x3_job_for(const lt_operand *o, int k_is_col, unsigned small_mask, float *dst)
{
    x3_job j;
    j.src = (const float *)o->p;
    j.dst = dst;
    j.rows = (size_t)o->rows;
    j.cols = (size_t)o->cols;
    j.ld = (size_t)o->ld;
    j.small_mask = small_mask;
    j.k_is_col = k_is_col;
    j.tiles_r = (j.rows + X3_TILE - 1) / X3_TILE;
    j.tiles = j.tiles_r * ((j.cols + X3_TILE - 1) / X3_TILE);
    j.blocks = (unsigned)(j.tiles < X3_MAX_BLOCKS ? j.tiles : X3_MAX_BLOCKS);
    return j;
}

/* o (the first operand of a matmul when first, else the second; fp32) as it reads
 * once split (x3_job_for's dst): K-major, 3K long in k, leading dimension 3K. */
static void x3_describe(lt_operand *o, int k_is_col, const float *dst)
{
    if (k_is_col) {
        o->op = o->op == CUBLAS_OP_N ? CUBLAS_OP_T : CUBLAS_OP_N;
        const uint64_t rows = o->rows;
        o->rows = 3 * o->cols;
        o->cols = rows;
    } else {
        o->rows = 3 * o->rows;
    }
    o->p = dst;
    o->ld = (int64_t)o->rows;
}

/* Part orders: the first operand [small big big], the second [big small big]. */
#define X3_MASK_FIRST 1u
#define X3_MASK_SECOND 2u

/* a (op(a) [m, K], fp32) and b (op(b) [K, n], fp32) as the K' = 3K operands of the
 * section's comment, written K-major (the reduction index contiguous: op(a) as
 * op_T, op(b) as op_N, the layout of the forward's fastest kernels in that probe)
 * into s's scratch (grown when too small) by one launch on
 * ctx->stream; a and b then describe them. a_split: a is split already (the weight
 * gradient's x, backend.h prepare_xt; a describes it as it reads), only b is split.
 * Errors: as ffnn_cublas_ensure_scratch, FFNN_ERR_CUDA (the launch). */
ffnn_status ffnn_cublas_tf32x3_split(ffnn_cuda_ctx *ctx, cublas_state *s, lt_operand *a,
                                     lt_operand *b, int a_split)
{
    const size_t na = a_split ? 0 : (size_t)(a->rows * a->cols), nb = (size_t)(b->rows * b->cols);
    const size_t b_at = (3 * na + 63) & ~(size_t)63; /* floats: b 256-byte aligned */
    const ffnn_status st = ffnn_cublas_ensure_scratch(ctx, s, (b_at + 3 * nb) * sizeof(float));
    if (st != FFNN_OK) return st;
    float *const da = (float *)s->scratch, *const db = (float *)s->scratch + b_at;
    /* the first operand's k is its column under op N, the second's under op T */
    const int a_col = a->op == CUBLAS_OP_N, b_col = b->op == CUBLAS_OP_T;
    const x3_job jb = x3_job_for(b, b_col, X3_MASK_SECOND, db);
    x3_job ja = jb;
    if (!a_split) ja = x3_job_for(a, a_col, X3_MASK_FIRST, da);
    else ja.blocks = 0;
    tf32x3_split_kernel<<<ja.blocks + jb.blocks, dim3(X3_TILE, 8), 0, ctx->stream>>>(ja, jb);
    FFNN_CUDA_LAUNCH_CHECK(ctx, "tf32x3_split_kernel");
    if (!a_split) x3_describe(a, a_col, da);
    x3_describe(b, b_col, db);
    return FFNN_OK;
}

/* backend.h prepare_xt: xt = x [batch, in] prepared for dense_backward_fused's
 * weight gradient, dW = dz^T x, where x is that matmul's first operand (as the
 * column-major [in, batch], k = batch its column): in tf32x3 its split x^T [in,
 * 3 batch] (ffnn_cublas_tf32x3_split's form of it: each input unit's row [small | big | big],
 * batch values each), else x^T [in, batch] (gather.cu's transpose). Queued on
 * ctx->stream. Errors: FFNN_ERR_INVALID_ARGUMENT (NULL pointer, a dimension outside
 * 1..FFNN_CUDA_MAX_DIM), FFNN_ERR_CUDA (a poisoned context, the launch). */
extern "C" ffnn_status ffnn_cuda_prepare_xt(void *vctx, const float *x, size_t batch, size_t in,
                                            float *xt)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "prepare_xt");
    if (ctx->precision != FFNN_PRECISION_TF32X3) return ffnn_cuda_transpose(ctx, x, batch, in, xt);
    if (x == NULL || xt == NULL || batch < 1 || in < 1 || batch > FFNN_CUDA_MAX_DIM ||
        in > FFNN_CUDA_MAX_DIM)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda prepare_xt: batch=%zu in=%zu must be in 1..%zu and x, xt "
                         "non-NULL", batch, in, (size_t)FFNN_CUDA_MAX_DIM);
    const lt_operand xa = {x, CUDA_R_32F, CUBLAS_OP_N, in, batch, (int64_t)in, 0};
    x3_job j = x3_job_for(&xa, 1, X3_MASK_FIRST, xt), none = j;
    none.blocks = 0;
    tf32x3_split_kernel<<<j.blocks, dim3(X3_TILE, 8), 0, ctx->stream>>>(j, none);
    FFNN_CUDA_LAUNCH_CHECK(ctx, "tf32x3_split_kernel");
    return FFNN_OK;
}
