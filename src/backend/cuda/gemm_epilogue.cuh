/*
 * gemm_epilogue.cuh - the per-output epilogue of the fused matmuls (gemm.cuh's order:
 * bias, activation, activation derivative, store, SGD), the one copy that gemm.cu's
 * FP32 / wmma kernels and gemm_mma.cu's mma.sync kernel call. Included by those two
 * .cu files only (static device functions: an includer that does not call them
 * would warn).
 */
#ifndef FFNN_CUDA_GEMM_EPILOGUE_CUH
#define FFNN_CUDA_GEMM_EPILOGUE_CUH

#include "gemm.cuh"

/* 1 when ep sums the rows of op(A) (rowsum or rowsum_param: db of a weight gradient;
 * column tile 0 does it). */
static __host__ __device__ __forceinline__ bool gemm_epi_has_rowsum(const ffnn_gemm_epilogue &ep)
{
    return ep.rowsum != NULL || ep.rowsum_param != NULL;
}

/* 1 when ep has no per-element step: C is stored as computed (inline). */
static __device__ __forceinline__ bool gemm_epi_plain(const ffnn_gemm_epilogue &ep)
{
    return ep.bias == NULL && ep.act == FFNN_ACT_IDENTITY && ep.dact_x == NULL &&
           ep.sgd_param == NULL;
}

/* The epilogue of one output value (gemm.cuh order). x: X[row,col] when dact_x. */
static __device__ __forceinline__ float gemm_epi_value(const ffnn_gemm_epilogue &ep, float acc,
                                                       float bias, float x)
{
    float v = acc;
    if (ep.bias != NULL) v = __fadd_rn(v, bias);
    /* relu first, outside the activation switch (the _basic one: identity, relu,
     * sigmoid, tanh; fused.cu refuses the others): the same work for relu as
     * before, the same values (ffnn_dev_relu, ffnn_dev_act_backward's relu case) */
    if (ep.act == FFNN_ACT_RELU) v = ffnn_dev_relu(v);
    else if (ep.act != FFNN_ACT_IDENTITY) v = ffnn_dev_act_forward_basic(ep.act, v);
    if (ep.dact_x != NULL)
        v = ep.dact == FFNN_ACT_RELU ? __fmul_rn(v, x > 0.0f ? 1.0f : 0.0f)
                                     : ffnn_dev_act_backward_basic(ep.dact, v, x);
    return v;
}

/* The row-sum epilogue (gemm.cuh: db = the sum over k of A's row, and its SGD
 * update) of row `row`, once per row by the thread that summed it. */
static __device__ __forceinline__ void gemm_epi_rowsum(const ffnn_gemm_epilogue &ep, int row,
                                                       float rs)
{
    if (ep.rowsum != NULL) ep.rowsum[row] = rs;
    if (ep.rowsum_param != NULL)
        ep.rowsum_param[row] = ffnn_dev_sgd(ep.rowsum_param[row], ep.lr, rs);
}

/* Outputs (row, col..col+W-1) of one thread, W <= 4: epilogue, store, SGD; columns
 * >= N skipped. vec4 (W == 4, all four in range, pointers 16-byte aligned): float4
 * accesses. MAY_SKIP_C (the model-axis kernels): no_c 1 leaves C unstored
 * (ffnn_gemm_models.no_c); the single matmul's copy has no such test. Not inlined:
 * the kernel calls it a few times per tile (one copy of the activation code per
 * kernel instead of one per output keeps compile times short); a matmul without
 * epilogue stores inline instead. */
template <bool MAY_SKIP_C>
static __device__ __noinline__ void gemm_epi_run(const ffnn_gemm_epilogue ep, int no_c,
                                                 float *__restrict__ C, int N, int row,
                                                 int col, float4 acc, int w, int vec4)
{
    const bool store_c = !MAY_SKIP_C || !no_c;
    const size_t idx = (size_t)row * N + col;
    const float a[4] = {acc.x, acc.y, acc.z, acc.w};
    if (vec4) {
        float4 b = make_float4(0.0f, 0.0f, 0.0f, 0.0f), x = b;
        if (ep.bias != NULL) b = *(const float4 *)(ep.bias + col);
        if (ep.dact_x != NULL) x = *(const float4 *)(ep.dact_x + idx);
        float4 v;
        v.x = gemm_epi_value(ep, a[0], b.x, x.x);
        v.y = gemm_epi_value(ep, a[1], b.y, x.y);
        v.z = gemm_epi_value(ep, a[2], b.z, x.z);
        v.w = gemm_epi_value(ep, a[3], b.w, x.w);
        if (store_c) *(float4 *)(C + idx) = v;
        if (ep.sgd_param != NULL) {
            float4 p = *(float4 *)(ep.sgd_param + idx);
            p.x = ffnn_dev_sgd(p.x, ep.lr, v.x);
            p.y = ffnn_dev_sgd(p.y, ep.lr, v.y);
            p.z = ffnn_dev_sgd(p.z, ep.lr, v.z);
            p.w = ffnn_dev_sgd(p.w, ep.lr, v.w);
            *(float4 *)(ep.sgd_param + idx) = p;
        }
        return;
    }
    for (int j = 0; j < w && col + j < N; ++j) {
        const float v = gemm_epi_value(ep, a[j], ep.bias != NULL ? ep.bias[col + j] : 0.0f,
                                       ep.dact_x != NULL ? ep.dact_x[idx + j] : 0.0f);
        if (store_c) C[idx + j] = v;
        if (ep.sgd_param != NULL)
            ep.sgd_param[idx + j] = ffnn_dev_sgd(ep.sgd_param[idx + j], ep.lr, v);
    }
}

/* ------------------------------------------------------------------ split-K */

/* Floats between two chunks' partial products in ctx->split_ws (M N rounded up to
 * 4, so every slice keeps float4 alignment); the partial row sums follow the last
 * slice, [splits, M]. */
static __host__ __device__ __forceinline__ size_t gemm_split_stride(int M, int N)
{
    return ((size_t)M * N + 3) & ~(size_t)3;
}

/* Model m's epilogue (ffnn_gemm_models z): its tensors and learning rate. */
static __device__ __forceinline__ void gemm_epi_for_model(ffnn_gemm_epilogue &ep,
                                                          const ffnn_gemm_models &z, size_t m)
{
    if (ep.bias != NULL) ep.bias += m * z.bias;
    if (ep.dact_x != NULL) ep.dact_x += m * z.dact_x;
    if (ep.sgd_param != NULL) ep.sgd_param += m * z.sgd_param;
    if (ep.rowsum != NULL) ep.rowsum += m * z.rowsum;
    if (ep.rowsum_param != NULL) ep.rowsum_param += m * z.rowsum_param;
    if (z.lr != NULL) ep.lr = z.lr[m];
}

/* The k-tile range [BEGIN, END) of this block (chunk blockIdx.z of K_SPLIT k tiles,
 * gemm_plan.h) and, when K is split (gridDim.z > 1), C and EP.rowsum moved to the
 * chunk's slices of the workspace (the launch passed the workspace as C and
 * gemm_split_epilogue's EP). Over a model axis (the kernel's template MODELS, Z its
 * ffnn_gemm_models) the whole of K instead, and A, B, C and EP moved to model
 * blockIdx.z's tensors. The kernels start at BEGIN's tile. */
#define GEMM_SPLIT_RANGE(BEGIN, END, K_TILES, K_SPLIT, MODELS, Z, A, B, C, EP, M, N)     \
    const int BEGIN = (MODELS) ? 0 : (int)blockIdx.z * (K_SPLIT);                         \
    const int END = (MODELS) ? (K_TILES) : min((K_TILES), BEGIN + (K_SPLIT));             \
    if constexpr (MODELS) {                                                               \
        const size_t m_ = blockIdx.z;                                                     \
        (A) += m_ * (Z).a;                                                                \
        (B) += m_ * (Z).b;                                                                \
        (C) += m_ * (Z).c;                                                                \
        gemm_epi_for_model((EP), (Z), m_);                                                \
    } else if (gridDim.z > 1) {                                                           \
        (C) += blockIdx.z * gemm_split_stride((M), (N));                                  \
        if ((EP).rowsum != NULL) (EP).rowsum += (size_t)blockIdx.z * (M);                 \
    }

/* The epilogue of a split matmul's first kernel: none, except the partial row
 * sums (into the workspace after the products) when ep asks for row sums. */
static inline ffnn_gemm_epilogue gemm_split_epilogue(const ffnn_cuda_ctx *ctx,
                                                     const ffnn_gemm_epilogue &ep, int M,
                                                     int N, int splits)
{
    ffnn_gemm_epilogue e;
    memset(&e, 0, sizeof e);
    if (gemm_epi_has_rowsum(ep))
        e.rowsum = ctx->split_ws + (size_t)splits * gemm_split_stride(M, N);
    return e;
}

#endif /* FFNN_CUDA_GEMM_EPILOGUE_CUH */
