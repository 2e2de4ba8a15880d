/*
 * gemm_plan.h - which tile configuration and how many K-splits the CUDA backend's
 * own matmuls (src/backend/cuda/gemm.cu, gemm_mma.cu) use for a shape, and which
 * cuBLASLt weight gradients take their input transposed (cublas.cu): plain C,
 * built in every configuration, so the tests can ask what a GPU run did.
 *
 * Split-K (deterministic, no atomics): when no tile configuration gives every SM a
 * block, the K range is cut into `splits` chunks of `k_chunk` (a multiple of the
 * configuration's BK; the last chunk is what is left). Chunk z's partial sums,
 * one fmaf chain in k order each, go to a workspace; a second kernel adds the
 * chunks in ascending z (((P0 + P1) + P2) + ...) and runs the epilogue. The row
 * sums (db) are split the same way: per chunk in k order from 0, the chunk sums
 * added in ascending z. With splits == 1 both are the single chain in k order of
 * before (db: the CPU reference's order, bit for bit).
 */
#ifndef FFNN_BACKEND_GEMM_PLAN_H
#define FFNN_BACKEND_GEMM_PLAN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Tile configurations (block tile BM x BN, BK deep). FP32 (gemm.cu, 256 threads,
 * TM x TN per thread): */
enum {
    FFNN_GEMM_AUTO = 0,
    FFNN_GEMM_128 = 1, /* 128x128 x 8, 8x8 per thread  */
    FFNN_GEMM_64 = 2,  /* 64x64 x 16, 4x4 per thread   */
    FFNN_GEMM_32 = 3,  /* 32x32 x 32, 2x2 per thread   */
    FFNN_GEMM_16 = 4,  /* 16x16 x 64, 1x1 per thread   */
    FFNN_GEMM_TF32_128 = 5, /* wmma tensor cores, 128x128 x 16 (the first tf32  */
    FFNN_GEMM_TF32_64 = 6,  /* kernel, kept for the kernel lab), 64x64 x 16     */
    FFNN_GEMM_MMA_128 = 7,  /* gemm_mma.cu: mma.sync + cp.async, 128x128 x 32,  */
                            /* 8 warps of 64x32, 3 stages                       */
    FFNN_GEMM_MMA_64 = 8,   /* 64x64 x 32, 8 warps of 32x16, 4 stages (AUTO)    */
    FFNN_GEMM_MMA_128W4 = 9,   /* 128x128 x 32, 4 warps of 64x64, 3 stages (AUTO) */
    FFNN_GEMM_MMA_128W4S4 = 10, /* the same, 4 stages                           */
    FFNN_GEMM_MMA_64W4 = 11,   /* 64x64 x 32, 4 warps of 32x32, 4 stages        */
    FFNN_GEMM_MMA_256 = 12,    /* 128x256 x 32, 8 warps of 64x64, 3 stages      */
    FFNN_GEMM_MMA_32 = 13      /* 32x32 x 32, 4 warps of 16x16, 4 stages (AUTO:  */
                               /* small outputs with short K)                   */
};

/* Workspace of the split matmuls, in floats: splits x M x N partial products and
 * splits x M partial row sums must fit (8 MiB; a plan never exceeds it). */
#define FFNN_GEMM_SPLIT_WS_FLOATS ((long long)1 << 21)
/* At most this many chunks; AUTO never splits K below FFNN_GEMM_SPLIT_MIN_K
 * (tensor cores) / FFNN_GEMM_SPLIT_MIN_K_FP32 (gemm.cu's FP32 kernel). */
#define FFNN_GEMM_MAX_SPLITS 16
#define FFNN_GEMM_SPLIT_MIN_K 512
#define FFNN_GEMM_SPLIT_MIN_K_FP32 1024

typedef struct ffnn_gemm_plan {
    int config;  /* FFNN_GEMM_* (never AUTO)                                   */
    int splits;  /* >= 1: chunks of K                                          */
    int k_chunk; /* k values per chunk (K when splits == 1)                    */
} ffnn_gemm_plan;

/* The plan for C[M,N] = op(A)[M,K] op(B)[K,N] (M, N, K >= 1) on sm_count SMs.
 * config: a fixed FFNN_GEMM_* or FFNN_GEMM_AUTO; tensor_cores: AUTO picks among
 * gemm_mma.cu's configurations (tf32/bf16) instead of gemm.cu's FP32 ones.
 * force_splits: 0 = decide; >= 1 = that many chunks (the kernel lab's sweep;
 * clamped to FFNN_GEMM_MAX_SPLITS, one BK step per chunk and the workspace).
 * The rule (AUTO; measured on the H200: docs/PERFORMANCE.md, "split-K"):
 *   - the largest tile whose grid gives every SM a block, unsplit (FP32: 128, 64,
 *     32; tensor cores: 128w4, 64) - the rule of before;
 *   - else, when K >= 512 (tensor cores) / 1024 (FP32), the 64 x 64 tile (FP32 64
 *     / MMA_64) with splits = ceil(SMs / tiles), at most FFNN_GEMM_MAX_SPLITS and
 *     K / (4 BK) (each chunk at least 4 k steps). Shorter K: the second kernel
 *     costs more than the split saves (H200: the kernel lab's 1024 x 128 x 128 and
 *     64 x 10 x 256 were slower split; graph fp32 on 784-256-10 at batch 64, whose
 *     forward 64 x 256 x 784 split 10 ways, 31.3 -> 35.5 ms/epoch, while tf32/bf16
 *     gained there); 128 x 128 x 1024 went from 43 to 9.5 us at 16 chunks;
 *   - when that leaves 1 split (short K): FP32 32 when its tiles leave at most a
 *     quarter of the SMs idle, else 16; tensor cores: MMA_32 (4x the blocks of
 *     MMA_64: the deep narrow net's 1024 x 128 x 128 forward and dx ran 8.3 and
 *     11.3 us on 32 blocks of MMA_64, ncu).
 * A fixed config is never split unless force_splits says so. */
ffnn_gemm_plan ffnn_gemm_plan_for(int sm_count, int M, int N, int K, int config,
                                  int tensor_cores, int force_splits);

/* 1 when the cublaslt strategy's tf32 weight gradient dW = dz^T x [out, in] (K =
 * batch) takes x through a transposed copy xT [in, batch]: then one operand is
 * K-major and cuBLASLt runs its sm90 (wgmma) kernels, whose tf32 operands must be
 * K-major; as stored, both dz [batch, out] and x [batch, in] are MN-major and it
 * runs an sm80 kernel. The copy (one transpose kernel, ~3 us per 4 MiB on an H200)
 * pays where that kernel choice changes: in >= 768, out >= 1024 and batch >= 1024
 * (git show 6b96639:bench/lt_survey.cu, H200: 1024 x 1024 at batch 1024 17.1 -> 12.4 us, 784 ->
 * 1024 17.9 -> 12.1, 4096^3 520 -> 315; 784 -> 256 and 512 -> 512 at batch 1024
 * and 784 -> 256 at 256 within 2%: docs/RESULTS.md history). tf32: 0 or 1. */
int ffnn_lt_dw_transposes_x(int tf32, size_t batch, size_t in, size_t out);

/* 1 when that copy of the first layer's x is better made by the step's gather,
 * beside the step on a second CUDA stream (backend.h dense_backward_wants_xt), than by
 * the weight-gradient op on the chain: where ffnn_lt_dw_transposes_x and batch <=
 * 1024. Measured on an H200 (docs/RESULTS.md "x^T from the gather" in its history,
 * cublaslt tf32, ms/epoch): 784-1024x2-10 at batch 1024 6.02 -> 5.77; at 2048
 * 4.48 -> 4.58 and the 4096-wide net at 4096 42.3 -> 42.4 (the side copy slows
 * the wider steps' matmuls more than the chain copy costs). */
int ffnn_lt_xt_from_gather(int tf32, size_t batch, size_t in, size_t out);

/* 1 when the cublaslt strategy's weight gradient dW [out, in] of a layer whose dx
 * was just computed runs on the second stream, concurrently with the layer below's
 * f' pass and weight gradient, where the step asks for it (backend.h
 * dense_backward_fused's and dense_backward_bf16's dw_side): in tf32 or bf16
 * (tensor_cores 1; the caller passes 0 for fp32) when the output counted in
 * 128 x 128 tiles is at most half of the sm_count multiprocessors. That count is a
 * measure of the output's size, not of cuBLASLt's grid: its tf32 kernel at 1024 x
 * 1024 runs 64 x 128 tiles, 128 CTAs (ncu, docs/RESULTS.md history). The
 * threshold is where the measurement below gained. Measured on an H200
 * (docs/RESULTS.md "The weight gradient beside the layer below", history,
 * ms/epoch at batch 1024, base -> beside): tf32 784-1024x2-10 6.01 / 6.00 -> 5.65 /
 * 5.65 (dW1 and dW0: 64 and 56 tiles of 132), 784-512x2-10 4.40 / 4.43 -> 4.07 /
 * 4.08, 784-1024x3-10 8.84 / 8.94 -> 8.53 / 8.62; bf16 (cuBLASLt's kernels take
 * every SM) 3.92 / 3.94 -> 3.79 / 3.87 and 784-512x2-10 level; fp32 beside 18.1 /
 * 18.3 -> 19.4 (its kernels fill the SMs): not taken. */
int ffnn_lt_dw_beside(int tensor_cores, int sm_count, size_t in, size_t out);

/* 1 when a cuBLASLt matmul with an m x n output takes its heuristic pick with CTA
 * swizzling 1 (cuda/cublas.cu lt_swizzle; where the pick splits K or cuBLASLt's
 * check refuses it, the pick as it is): tf32x3's matmuls over K' = 3K (tf32x3 1;
 * their operands are K-major), and tf32's whose operands are not both K-major
 * (k_major 0: dx, N N; the weight gradient through x^T, T T), with m n in [2^19,
 * 2^21] elements (about one wave of 64 x 128 tiles on an H200's 132 SMs: the wide
 * net's 1024 x 1024 and 784 x 1024). Swizzling orders the output tiles, not any
 * sum: the same bits. Measured on an H200 (docs/RESULTS.md "tf32x3's splits off the
 * chain; CTA swizzling at one-wave outputs", history; bench/lt_search.cu,
 * removed: `git show 6b96639:bench/lt_search.cu` has it): x3 fwd0
 * 24.4 -> 23.4 us, fwd1 26.0 -> 24.4-24.7, dx1 26.0 -> 24.4, dW1 with SGD 27.0 ->
 * 25.3; tf32 dx1 12.9 -> 11.7, dW1 13.0 -> 12.4 (H200), while tf32's forward
 * (T N) was fastest as picked; ms/epoch: wide tf32 5.27-5.43 -> 5.20-5.33, tf32x3
 * 12.39-12.43 -> 12.01-12.11, 784-1024x3-10 tf32 8.30-8.37 -> 8.02-8.15; on every
 * tf32x3 matmul, 784-256-10 at batch 256 and the 4096-wide net within their spread
 * (hence the range). */
int ffnn_lt_swizzles(int tf32x3, int tf32, int k_major, size_t m, size_t n);

/* The block tile and depth of a configuration (0 for AUTO / unknown). */
int ffnn_gemm_config_bm(int config);
int ffnn_gemm_config_bn(int config);
int ffnn_gemm_config_bk(int config);

#ifdef __cplusplus
}
#endif

#endif /* FFNN_BACKEND_GEMM_PLAN_H */
