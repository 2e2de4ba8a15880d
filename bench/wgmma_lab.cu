// wgmma_lab.cu - a Hopper tensor-core GEMM of our own, first step (issue 15, deliverable 2):
// C[M,N] = act(A[M,K] B[N,K]^T + bias[N]) in fp32, the forward of a dense layer (A = x,
// B = W, both K-contiguous), with
//   - TMA (cp.async.bulk.tensor.2d) loads of 128-byte-wide K slices of A and B into shared
//     memory, 128-byte swizzle, a STAGES-deep ring of full/empty mbarriers;
//   - one producer warpgroup (one thread issues the TMA loads) and two consumer warpgroups,
//     each multiplying 64 rows of the block's 128 by BN columns with
//     wgmma.mma_async.m64nBNk16 (bf16) or .m64nBNk8 (tf32: the fp32 bits as TF32), fp32
//     accumulation in registers;
//   - the epilogue (bias, relu) on the accumulators, stored straight from registers;
//   - optionally (MC 2) clusters of two CTAs along N that load half of the shared A tile
//     each and multicast it to both (the same bits; as fast as MC 1 at 1024-sized
//     outputs, slower at 4096: docs/RESULTS.md);
//   - optionally (SK 2) K split in two: both CTAs of a tile store their partial sums, the
//     last to finish adds the other's (the same bits whichever it is) and runs the epilogue.
// Checked against cuBLASLt's matmul of the same operands (same epilogue) and against a
// double-precision sum on the host for sampled outputs; timed against cuBLASLt's first
// heuristic pick (what src/backend/cuda/cublas.cu uses) in the same process: 20 launches
// in a CUDA graph, best of 5. Outside libffnn (wgmma needs sm_90a machine code); on an H100
// or H200:
//   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a bench/wgmma_lab.cu \
//        -o wgmma_lab -lcublasLt
//   ./wgmma_lab
// Method: the PTX ISA's wgmma (matrix descriptors, the accumulator fragment layout,
// 128-byte swizzle), cp.async.bulk.tensor and mbarrier sections; the producer/consumer
// warpgroup split as in CUTLASS's sm90 "warp-specialized" GEMMs. docs/RESULTS.md
// "Our own wgmma + TMA GEMM, first step".
#include <cuda.h>
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <algorithm>
#include <cmath>
#include <vector>

#include "cuda_probe.cuh"
#include "wgmma.cuh"

/* BM 128: two consumer warpgroups of 64 rows; BM 64: one (measured slower at 1024-sized
 * outputs with BN 128, docs/RESULTS.md). MC 2: clusters of two CTAs along N (the same BM
 * rows of A, neighbouring BN columns); each loads half of the A tile and multicasts it to
 * both, so that A crosses from L2 once per cluster (the cluster launched by the caller:
 * launch_ours). */
template <typename T, int BM, int BN, int STAGES, int MC, int SK>
static __global__ void __launch_bounds__(128 * (1 + BM / 64), 1)
wgmma_gemm(const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb,
           float *__restrict__ C, const float *__restrict__ bias, int M, int N, int K, int relu,
           float *__restrict__ ws, unsigned *__restrict__ flags)
{
    constexpr int BK = 128 / (int)sizeof(T);       /* 64 bf16 or 32 fp32: 128-byte rows */
    constexpr int A_BYTES = BM * 128, B_BYTES = BN * 128;
    extern __shared__ unsigned char smem_raw[];
    unsigned char *smem = (unsigned char *)(((uintptr_t)smem_raw + 1023) & ~(uintptr_t)1023);
    unsigned char *sA = smem, *sB = smem + STAGES * A_BYTES;
    __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int KT_all = (K + BK - 1) / BK, kt0 = (int)blockIdx.z * KT_all / SK;
    const int KT = ((int)blockIdx.z + 1) * KT_all / SK - kt0; /* SK 2: this CTA's half of K */
    const unsigned rank = MC > 1 ? cluster_rank() : 0;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; s++) {
            mbar_init(&full[s], 1);
            mbar_init(&empty[s], 4 * (BM / 64) * MC); /* lane 0 of each consumer warp of
                                                        * the cluster */
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    if (MC > 1) cluster_sync_all(); /* the peer's barriers exist before its loads arrive */
    else __syncthreads();
    if (wg == 0) { /* producer */
        if (tid == 0)
            for (int kt = 0; kt < KT; kt++) {
                const int s = kt % STAGES;
                if (kt >= STAGES) mbar_wait(&empty[s], ((kt / STAGES) - 1) & 1);
                mbar_expect_tx(&full[s], A_BYTES + B_BYTES);
                if (MC > 1)
                    tma_load_2d_multicast(sA + s * A_BYTES + rank * (BM / MC) * 128, &ta, (kt0 + kt) * BK,
                                          m0 + (int)rank * (BM / MC), &full[s],
                                          (uint16_t)((1u << MC) - 1));
                else
                    tma_load_2d(sA + s * A_BYTES, &ta, (kt0 + kt) * BK, m0, &full[s]);
                tma_load_2d(sB + s * B_BYTES, &tb, (kt0 + kt) * BK, n0, &full[s]);
            }
        __syncwarp(); /* thread 0 rejoins its warp: the cluster barrier is .aligned */
        if (MC > 1) cluster_sync_all(); /* stay until the peer no longer writes here */
        return;
    }
    const int cw = wg - 1; /* rows cw*64 .. of the block's 128 */
    /* not zeroed: the first wgmma overwrites them (scale-d 0); a zeroing mov would make
     * ptxas serialize the wgmmas (C7515) */
    float d[BN / 2];
    for (int kt = 0; kt < KT; kt++) {
        const int s = kt % STAGES;
        mbar_wait(&full[s], (kt / STAGES) & 1);
        wgmma_fence();
        wgmma_step<T, BN>(d, sw128_desc(sA + s * A_BYTES + cw * 64 * 128),
                          sw128_desc(sB + s * B_BYTES), kt == 0);
        wgmma_commit();
        /* one group stays in flight: the previous k step's is done, its stage free */
        wgmma_wait<1>();
        if (kt > 0 && tid % 32 == 0) {
            if (MC > 1)
                for (unsigned c = 0; c < (unsigned)MC; c++)
                    mbar_arrive_cluster(&empty[(kt - 1) % STAGES], c);
            else
                mbar_arrive(&empty[(kt - 1) % STAGES]);
        }
    }
    wgmma_wait<0>();
    if (SK == 2) { /* split K in two: both CTAs of a tile store their partial sums, the
                    * last to finish adds the other's (a + b == b + a: the same bits
                    * whichever it is) and runs the epilogue */
        __shared__ int last;
        const int ct = threadIdx.x - 128, tile = blockIdx.y * gridDim.x + blockIdx.x;
        float *mine = ws + ((size_t)(tile * 2 + blockIdx.z) * (BN / 2)) * (BM * 2);
        const float *other = ws + ((size_t)(tile * 2 + (1 - blockIdx.z)) * (BN / 2)) * (BM * 2);
#pragma unroll
        for (int i = 0; i < BN / 2; i++) mine[(size_t)i * (BM * 2) + ct] = d[i];
        __threadfence();
        asm volatile("bar.sync 1, %0;\n" ::"n"(BM * 2) : "memory");
        if (ct == 0) last = atomicAdd(&flags[tile], 1u) == 1u;
        asm volatile("bar.sync 1, %0;\n" ::"n"(BM * 2) : "memory");
        if (!last) return;
        __threadfence();
#pragma unroll
        for (int i = 0; i < BN / 2; i++) d[i] += __ldcg(&other[(size_t)i * (BM * 2) + ct]);
        if (ct == 0) flags[tile] = 0;
    }
    /* accumulator (wgmma m64nN f32): warp w rows 16w + lane/4 (+8 for regs 2,3 of each
     * n8 block), columns 8j + 2(lane%4) + {0,1} */
    const int warp = tid / 32, lane = tid % 32;
    const int r0 = m0 + cw * 64 + warp * 16 + lane / 4;
#pragma unroll
    for (int j = 0; j < BN / 8; j++) {
        const int col = n0 + 8 * j + 2 * (lane % 4);
        const float b0 = bias && col < N ? bias[col] : 0.0f;
        const float b1 = bias && col + 1 < N ? bias[col + 1] : 0.0f;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int row = r0 + 8 * h;
            float v0 = d[4 * j + 2 * h] + b0, v1 = d[4 * j + 2 * h + 1] + b1;
            if (relu) {
                v0 = fmaxf(v0, 0.0f);
                v1 = fmaxf(v1, 0.0f);
            }
            if (row >= M) continue;
            float *out = C + (size_t)row * N + col;
            if (col + 1 < N && (N % 2) == 0) *(float2 *)out = make_float2(v0, v1);
            else {
                if (col < N) out[0] = v0;
                if (col + 1 < N) out[1] = v1;
            }
        }
    }
    if (MC > 1) cluster_sync_all();
}

/* ------------------------------------------------------------------ host */
typedef CUresult (*encode_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                              const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                              const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                              CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
static encode_fn get_encode()
{
    void *fn = NULL;
    cudaDriverEntryPointQueryResult q;
    CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault,
                                        &q));
    if (fn == NULL || q != cudaDriverEntryPointSuccess) {
        printf("no cuTensorMapEncodeTiled\n");
        exit(1);
    }
    return (encode_fn)fn;
}
/* rows x K, K contiguous, box of (128 bytes of K) x box_rows */
static CUtensorMap make_map(encode_fn enc, const void *p, int elem, uint64_t rows, uint64_t K,
                            uint32_t box_rows)
{
    CUtensorMap m;
    const cuuint64_t dims[2] = {K, rows};
    const cuuint64_t strides[1] = {K * (uint64_t)elem};
    const cuuint32_t box[2] = {128u / (uint32_t)elem, box_rows};
    const cuuint32_t es[2] = {1, 1};
    CK(enc(&m, elem == 2 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2,
           (void *)p, dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
           CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
           CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    return m;
}

static float *g_ws;       /* split-K partials (lab only) */
static unsigned *g_flags; /* tiles' arrival counts, zero between launches */
template <typename T, int BM, int BN, int STAGES, int MC, int SK = 1>
static void launch_ours(const CUtensorMap &ta, const CUtensorMap &tb, float *C, const float *bias,
                        int M, int N, int K, cudaStream_t st)
{
    const size_t smem = (size_t)STAGES * (BM + BN) * 128 + 1024;
    static bool set = false;
    if (!set) {
        CK(cudaFuncSetAttribute(wgmma_gemm<T, BM, BN, STAGES, MC, SK>,
                                cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        set = true;
    }
    const unsigned gx = (unsigned)((N + BN - 1) / BN);
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((gx + MC - 1) / MC * MC, (M + BM - 1) / BM, SK);
    cfg.blockDim = dim3(128 * (1 + BM / 64));
    cfg.dynamicSmemBytes = smem;
    cfg.stream = st;
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = MC;
    at[0].val.clusterDim.y = 1;
    at[0].val.clusterDim.z = 1;
    cfg.attrs = at;
    cfg.numAttrs = 1;
    CK(cudaLaunchKernelEx(&cfg, wgmma_gemm<T, BM, BN, STAGES, MC, SK>, ta, tb, C, bias, M, N, K,
                          1, g_ws, g_flags));
}

struct Lt {
    cublasLtHandle_t h;
    void *ws;
    size_t ws_bytes;
};
/* cuBLASLt's C = relu(A B^T + bias), as cublas.cu's forward: D [N, M] col-major = W^T op,
 * x; returns the launch as a lambda-able state */
struct LtCall {
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, ld;
    cublasLtMatmulHeuristicResult_t heur;
};
static LtCall lt_prepare(Lt &lt, int bf, const void *A, const void *B, const float *bias, int M,
                         int N, int K)
{
    LtCall c;
    const cublasComputeType_t comp = bf ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_FAST_TF32;
    const cudaDataType_t ab = bf ? CUDA_R_16BF : CUDA_R_32F;
    CK(cublasLtMatmulDescCreate(&c.desc, comp, CUDA_R_32F));
    const cublasOperation_t t = CUBLAS_OP_T, n = CUBLAS_OP_N;
    CK(cublasLtMatmulDescSetAttribute(c.desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t));
    CK(cublasLtMatmulDescSetAttribute(c.desc, CUBLASLT_MATMUL_DESC_TRANSB, &n, sizeof n));
    const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_RELU_BIAS;
    CK(cublasLtMatmulDescSetAttribute(c.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
    CK(cublasLtMatmulDescSetAttribute(c.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                      sizeof bias));
    CK(cublasLtMatrixLayoutCreate(&c.la, ab, K, N, K));
    CK(cublasLtMatrixLayoutCreate(&c.lb, ab, K, M, K));
    CK(cublasLtMatrixLayoutCreate(&c.ld, CUDA_R_32F, N, M, N));
    cublasLtMatmulPreference_t pref;
    CK(cublasLtMatmulPreferenceCreate(&pref));
    CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                            &lt.ws_bytes, sizeof lt.ws_bytes));
    int found = 0;
    CK(cublasLtMatmulAlgoGetHeuristic(lt.h, c.desc, c.la, c.lb, c.ld, c.ld, pref, 1, &c.heur,
                                      &found));
    if (!found) {
        printf("no cuBLASLt algorithm\n");
        exit(1);
    }
    (void)A;
    (void)B;
    return c;
}

template <typename T, int BM, int BN, int STAGES, int MC, int SK = 1>
static void run_case(Lt &lt, encode_fn enc, cudaStream_t st, int M, int N, int K)
{
    const int bf = sizeof(T) == 2;
    float *Af, *Bf, *bias, *C, *Cref;
    __nv_bfloat16 *Ah, *Bh;
    CK(cudaMalloc(&Af, (size_t)M * K * 4));
    CK(cudaMalloc(&Bf, (size_t)N * K * 4));
    CK(cudaMalloc(&Ah, (size_t)M * K * 2));
    CK(cudaMalloc(&Bh, (size_t)N * K * 2));
    CK(cudaMalloc(&bias, (size_t)N * 4));
    CK(cudaMalloc(&C, (size_t)M * N * 4));
    CK(cudaMalloc(&Cref, (size_t)M * N * 4));
    __nv_bfloat16 *bh;
    CK(cudaMalloc(&bh, (size_t)N * 2));
    probe_fill<<<512, 256>>>(Af, Ah, (size_t)M * K, 11u);
    probe_fill<<<512, 256>>>(Bf, Bh, (size_t)N * K, 23u);
    probe_fill<<<64, 256>>>(bias, bh, (size_t)N, 5u);
    CK(cudaDeviceSynchronize());
    const void *A = bf ? (const void *)Ah : Af, *B = bf ? (const void *)Bh : Bf;
    const CUtensorMap ta = make_map(enc, A, sizeof(T), M, K, BM / MC);
    const CUtensorMap tb = make_map(enc, B, sizeof(T), N, K, BN);
    LtCall c = lt_prepare(lt, bf, A, B, bias, M, N, K);
    const float one = 1.0f, zero = 0.0f;
    auto lt_launch = [&]() {
        cublasLtMatmul(lt.h, c.desc, &one, B, c.la, A, c.lb, &zero, Cref, c.ld, Cref, c.ld,
                       &c.heur.algo, lt.ws, lt.ws_bytes, st);
    };
    auto our_launch = [&]() { launch_ours<T, BM, BN, STAGES, MC, SK>(ta, tb, C, bias, M, N, K, st);
    };
    CK(cudaMemset(C, 0xff, (size_t)M * N * 4));
    lt_launch();
    our_launch();
    CK(cudaStreamSynchronize(st));
    CK(cudaGetLastError());
    std::vector<float> h(M * (size_t)N), r(M * (size_t)N);
    CK(cudaMemcpy(h.data(), C, h.size() * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(r.data(), Cref, r.size() * 4, cudaMemcpyDeviceToHost));
    double dmax = 0, rmax = 0;
    size_t bad = 0;
    for (size_t i = 0; i < h.size(); i++) {
        if (!std::isfinite(h[i])) bad++;
        dmax = std::max(dmax, (double)std::fabs(h[i] - r[i]));
        rmax = std::max(rmax, (double)std::fabs(r[i]));
    }
    /* the host's double sum of the operands as the tensor cores read them (bf16: the
     * rounded values; tf32: the fp32 values, so the difference includes TF32's cut) for
     * 64 sampled outputs */
    std::vector<float> a(M * (size_t)K), b(N * (size_t)K), bv(N);
    if (bf) {
        std::vector<__nv_bfloat16> t(M * (size_t)K), u(N * (size_t)K);
        CK(cudaMemcpy(t.data(), Ah, t.size() * 2, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(u.data(), Bh, u.size() * 2, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < t.size(); i++) a[i] = __bfloat162float(t[i]);
        for (size_t i = 0; i < u.size(); i++) b[i] = __bfloat162float(u[i]);
    } else {
        CK(cudaMemcpy(a.data(), Af, a.size() * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(b.data(), Bf, b.size() * 4, cudaMemcpyDeviceToHost));
    }
    CK(cudaMemcpy(bv.data(), bias, bv.size() * 4, cudaMemcpyDeviceToHost));
    double hmax = 0;
    for (int s = 0; s < 64; s++) {
        const int i = (int)((s * 7919u) % (unsigned)M), j = (int)((s * 104729u) % (unsigned)N);
        double acc = bv[j];
        for (int k = 0; k < K; k++) acc += (double)a[(size_t)i * K + k] * b[(size_t)j * K + k];
        acc = std::max(acc, 0.0);
        hmax = std::max(hmax, std::fabs(acc - h[(size_t)i * N + j]));
    }
    const float t_lt = graph_us(st, 5, lt_launch), t_ours = graph_us(st, 5, our_launch);
    const double flop = 2.0 * M * N * K;
    printf("%s %5dx%5dx%5d BM %3d BN %3d stages %d cluster %d split-K %d: ours %8.2f us (%6.1f TFLOP/s)  "
           "cuBLASLt %8.2f us "
           "(%6.1f)  ratio %.2f | max|ours-lt| %.2e of %.3g, host sample %.2e, non-finite %zu\n",
           bf ? "bf16" : "tf32", M, N, K, BM, BN, STAGES, MC, SK, t_ours, flop / t_ours / 1e6, t_lt,
           flop / t_lt / 1e6, t_ours / t_lt, dmax, rmax, hmax, bad);
    fflush(stdout);
    cudaFree(Af);
    cudaFree(Bf);
    cudaFree(Ah);
    cudaFree(Bh);
    cudaFree(bias);
    cudaFree(bh);
    cudaFree(C);
    cudaFree(Cref);
}

int main()
{
    Lt lt;
    CK(cublasLtCreate(&lt.h));
    lt.ws_bytes = 32u << 20;
    CK(cudaMalloc(&lt.ws, lt.ws_bytes));
    cudaStream_t st;
    CK(cudaStreamCreate(&st));
    encode_fn enc = get_encode();
    CK(cudaMalloc(&g_ws, (size_t)2 * 1024 * 1024 * 4));
    CK(cudaMalloc(&g_flags, 4096 * 4));
    CK(cudaMemset(g_flags, 0, 4096 * 4));
    const int shapes[][3] = {{1024, 1024, 1024}, {1024, 1024, 784}, {1024, 256, 784},
                             {4096, 4096, 4096}, {1000, 1000, 1000}};
    for (auto &s : shapes) {
        if (s[0] >= 4096) {
            run_case<__nv_bfloat16, 128, 256, 4, 1>(lt, enc, st, s[0], s[1], s[2]);
            run_case<__nv_bfloat16, 128, 256, 4, 2>(lt, enc, st, s[0], s[1], s[2]);
            run_case<float, 128, 256, 4, 1>(lt, enc, st, s[0], s[1], s[2]);
            run_case<float, 128, 256, 4, 2>(lt, enc, st, s[0], s[1], s[2]);
            continue;
        }
        run_case<__nv_bfloat16, 128, 64, 4, 1>(lt, enc, st, s[0], s[1], s[2]);
        run_case<__nv_bfloat16, 128, 64, 4, 2>(lt, enc, st, s[0], s[1], s[2]);
        run_case<__nv_bfloat16, 64, 128, 4, 1>(lt, enc, st, s[0], s[1], s[2]);
        run_case<__nv_bfloat16, 64, 128, 6, 1>(lt, enc, st, s[0], s[1], s[2]);
        run_case<__nv_bfloat16, 64, 64, 6, 1>(lt, enc, st, s[0], s[1], s[2]);
        run_case<float, 128, 64, 4, 1>(lt, enc, st, s[0], s[1], s[2]);
        run_case<float, 128, 64, 4, 2>(lt, enc, st, s[0], s[1], s[2]);
        run_case<float, 64, 128, 4, 1>(lt, enc, st, s[0], s[1], s[2]);
        run_case<float, 64, 128, 6, 1>(lt, enc, st, s[0], s[1], s[2]);
        if (s[0] == 1024 && s[1] == 256) continue;
        /* K split in two over 128 x 128 / 128 x 256 tiles (as many CTAs as 128 x 64
         * tiles or half); slower at every shape here (docs/RESULTS.md session 39) */
        run_case<float, 128, 128, 4, 1, 2>(lt, enc, st, s[0], s[1], s[2]);
        run_case<float, 128, 128, 6, 1, 2>(lt, enc, st, s[0], s[1], s[2]);
        run_case<float, 128, 256, 3, 1, 2>(lt, enc, st, s[0], s[1], s[2]);
        run_case<__nv_bfloat16, 128, 128, 4, 1, 2>(lt, enc, st, s[0], s[1], s[2]);
        run_case<__nv_bfloat16, 128, 256, 4, 1, 2>(lt, enc, st, s[0], s[1], s[2]);
    }
    return 0;
}
