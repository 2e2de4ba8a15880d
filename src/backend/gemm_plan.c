/* gemm_plan.c - the tile configuration and split-K plan of the CUDA backend's own
 * matmuls (gemm_plan.h: the rule and why). */
#include "backend/gemm_plan.h"

int ffnn_gemm_config_bm(int config)
{
    switch (config) {
    case FFNN_GEMM_128: case FFNN_GEMM_TF32_128: case FFNN_GEMM_MMA_128:
    case FFNN_GEMM_MMA_128W4: case FFNN_GEMM_MMA_128W4S4: case FFNN_GEMM_MMA_256: return 128;
    case FFNN_GEMM_64: case FFNN_GEMM_TF32_64: case FFNN_GEMM_MMA_64:
    case FFNN_GEMM_MMA_64W4: return 64;
    case FFNN_GEMM_32: case FFNN_GEMM_MMA_32: return 32;
    case FFNN_GEMM_16: return 16;
    default: return 0;
    }
}

int ffnn_gemm_config_bn(int config)
{
    return config == FFNN_GEMM_MMA_256 ? 256 : ffnn_gemm_config_bm(config);
}

int ffnn_gemm_config_bk(int config)
{
    switch (config) {
    case FFNN_GEMM_128: return 8;
    case FFNN_GEMM_64: case FFNN_GEMM_TF32_128: case FFNN_GEMM_TF32_64: return 16;
    case FFNN_GEMM_32: return 32;
    case FFNN_GEMM_16: return 64;
    case FFNN_GEMM_AUTO: return 0;
    default: return config > FFNN_GEMM_TF32_64 && config <= FFNN_GEMM_MMA_32 ? 32 : 0;
    }
}

/* Output tiles of a configuration for an M x N output. */
static long long tiles_of(int config, int M, int N)
{
    const long long bm = ffnn_gemm_config_bm(config), bn = ffnn_gemm_config_bn(config);
    return ((M + bm - 1) / bm) * ((N + bn - 1) / bn);
}

/* Cut K into `splits` chunks of whole BK steps; at most what the workspace holds. */
static ffnn_gemm_plan split_k(int config, int M, int N, int K, int splits)
{
    const int bk = ffnn_gemm_config_bk(config);
    const long long per_split = (long long)M * N + 4 + M; /* gemm_split_stride + rows */
    const long long ws_max = FFNN_GEMM_SPLIT_WS_FLOATS / per_split;
    const int k_steps = (K + bk - 1) / bk;
    if (splits > FFNN_GEMM_MAX_SPLITS) splits = FFNN_GEMM_MAX_SPLITS;
    if (splits > k_steps) splits = k_steps;
    if (splits > ws_max) splits = (int)ws_max;
    ffnn_gemm_plan p = {config, 1, K};
    if (splits < 2) return p;
    const int steps_per_chunk = (k_steps + splits - 1) / splits;
    p.k_chunk = steps_per_chunk * bk;
    p.splits = (K + p.k_chunk - 1) / p.k_chunk;
    if (p.splits < 2) p.k_chunk = K, p.splits = 1;
    return p;
}

ffnn_gemm_plan ffnn_gemm_plan_for(int sm_count, int M, int N, int K, int config,
                                  int tensor_cores, int force_splits)
{
    const long long sms = sm_count > 0 ? sm_count : 1;
    ffnn_gemm_plan p = {config, 1, K};
    const int split_config = tensor_cores ? FFNN_GEMM_MMA_64 : FFNN_GEMM_64;
    if (config != FFNN_GEMM_AUTO)
        return force_splits > 1 ? split_k(config, M, N, K, force_splits) : p;
    if (force_splits > 0) return split_k(split_config, M, N, K, force_splits);
    /* the largest tile that fills the GPU, unsplit */
    static const int fp32_order[] = {FFNN_GEMM_128, FFNN_GEMM_64, FFNN_GEMM_32};
    static const int mma_order[] = {FFNN_GEMM_MMA_128W4, FFNN_GEMM_MMA_64};
    const int *order = tensor_cores ? mma_order : fp32_order;
    const int n_order = tensor_cores ? 2 : 3;
    for (int i = 0; i < n_order; i++)
        if (tiles_of(order[i], M, N) >= sms) {
            p.config = order[i];
            return p;
        }
    /* a small output with deep K: 64 x 64 tiles, K cut so that every SM gets a block */
    const long long t64 = tiles_of(split_config, M, N);
    long long splits = (sms + t64 - 1) / t64;
    const int min_k = tensor_cores ? FFNN_GEMM_SPLIT_MIN_K : FFNN_GEMM_SPLIT_MIN_K_FP32;
    const long long by_depth = K >= min_k ? K / (4 * ffnn_gemm_config_bk(split_config)) : 1;
    if (splits > FFNN_GEMM_MAX_SPLITS) splits = FFNN_GEMM_MAX_SPLITS;
    if (splits > by_depth) splits = by_depth;
    if (splits >= 2) {
        p = split_k(split_config, M, N, K, (int)splits);
        if (p.splits >= 2) return p;
    }
    /* short K: smaller tiles (FP32 32 x 32 when its tiles leave at most a quarter
     * of the SMs idle, else 16 x 16; tensor cores 32 x 32) */
    if (tensor_cores)
        p.config = FFNN_GEMM_MMA_32;
    else
        p.config = 4 * tiles_of(FFNN_GEMM_32, M, N) >= 3 * sms ? FFNN_GEMM_32 : FFNN_GEMM_16;
    p.splits = 1;
    p.k_chunk = K;
    return p;
}

int ffnn_lt_dw_transposes_x(int tf32, size_t batch, size_t in, size_t out)
{
    return tf32 && in >= 768 && out >= 1024 && batch >= 1024;
}

int ffnn_lt_xt_from_gather(int tf32, size_t batch, size_t in, size_t out)
{
    return ffnn_lt_dw_transposes_x(tf32, batch, in, out) && batch <= 1024;
}

int ffnn_lt_swizzles(int tf32x3, int tf32, int k_major, size_t m, size_t n)
{
    const size_t lo = (size_t)1 << 19, hi = (size_t)1 << 21;
    return (tf32x3 || (tf32 && !k_major)) && m * n >= lo && m * n <= hi;
}

int ffnn_lt_dw_beside(int tensor_cores, int sm_count, size_t in, size_t out)
{
    const size_t tiles = ((in + 127) / 128) * ((out + 127) / 128);
    return tensor_cores && sm_count > 0 && tiles * 2 <= (size_t)sm_count;
}
