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
//     outputs, slower at 4096: docs/RESULTS.md).
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
#pragma nv_diag_suppress 177 /* the generated wrappers the cases below do not use */

/* ------------------------------------------------------------------ PTX */
static __device__ __forceinline__ uint32_t smem_u32(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}
static __device__ __forceinline__ void mbar_init(uint64_t *b, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(b)), "r"(count));
}
static __device__ __forceinline__ void mbar_expect_tx(uint64_t *b, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(b)),
                 "r"(bytes)
                 : "memory");
}
static __device__ __forceinline__ void mbar_arrive(uint64_t *b)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(b)) : "memory");
}
static __device__ __forceinline__ void mbar_wait(uint64_t *b, unsigned parity)
{
    asm volatile("{\n"
                 ".reg .pred done;\n"
                 "WAIT_%=:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra WAIT_%=;\n"
                 "}\n" ::"r"(smem_u32(b)),
                 "r"(parity)
                 : "memory");
}
/* the [box] tile at (c0 = k, c1 = row) of the tensor map into dst, completing on bar */
static __device__ __forceinline__ void tma_load_2d(void *dst, const CUtensorMap *map, int c0,
                                                   int c1, uint64_t *bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(smem_u32(dst)),
                 "l"((uint64_t)map), "r"(c0), "r"(c1), "r"(smem_u32(bar))
                 : "memory");
}
/* As tma_load_2d, the tile written at the same offset of dst (and signalled on the same
 * barrier) in every CTA of the cluster named in mask. */
static __device__ __forceinline__ void tma_load_2d_multicast(void *dst, const CUtensorMap *map,
                                                             int c0, int c1, uint64_t *bar,
                                                             uint16_t mask)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(smem_u32(dst)),
                 "l"((uint64_t)map), "r"(c0), "r"(c1), "r"(smem_u32(bar)), "h"(mask)
                 : "memory");
}
/* arrive on the barrier at bar's offset in CTA `cta` of the cluster (release at CTA scope,
 * the default, as CUTLASS's ClusterBarrier; .release.cluster made every k step ~0.6 us
 * longer: docs/RESULTS.md) */
static __device__ __forceinline__ void mbar_arrive_cluster(uint64_t *bar, unsigned cta)
{
    uint32_t remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n"
                 : "=r"(remote)
                 : "r"(smem_u32(bar)), "r"(cta));
    asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(remote)
                 : "memory");
}
static __device__ __forceinline__ unsigned cluster_rank()
{
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}
static __device__ __forceinline__ void cluster_sync_all()
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n"
                 "barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
/* wgmma's shared-memory matrix descriptor of a K-major tile with 128-byte rows, 128-byte
 * swizzle (as TMA wrote it): start address >> 4, leading byte offset 16 (unused by the
 * swizzled K-major layout), stride byte offset 1024 (8 rows of 128 bytes), layout 1. */
static __device__ __forceinline__ uint64_t sw128_desc(const void *p)
{
    const uint64_t a = smem_u32(p);
    return ((a & 0x3FFFF) >> 4) | ((uint64_t)(16 >> 4) << 16) | ((uint64_t)(1024 >> 4) << 32) |
           (1ull << 62);
}
static __device__ __forceinline__ void wgmma_fence()
{
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
static __device__ __forceinline__ void wgmma_commit()
{
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N>
static __device__ __forceinline__ void wgmma_wait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
/* wgmma.mma_async wrappers (generated): d [N/2] the accumulators, da / db the operands'
 * descriptors, scale_d 0: d = the product (d not read). One operand list per N (the
 * macros); bf16 takes four immediates (scales, no transposes), tf32 two. */
#define WGMMA_M64N64(OPCODE, IMMEDIATES)                                \
    asm volatile("{\n"                                                  \
                 ".reg .pred p;\n"                                      \
                 "setp.ne.b32 p, %34, 0;\n"                             \
                 OPCODE " {"                                            \
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, "             \
                 "%10, %11, %12, %13, %14, %15, %16, %17, %18, %19, "   \
                 "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, "   \
                 "%30, %31"                                             \
                 "}, %32, %33, p, " IMMEDIATES ";\n"                    \
                 "}\n"                                                  \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]),      \
                   "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),      \
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),    \
                   "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),  \
                   "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]),  \
                   "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),  \
                   "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),  \
                   "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])   \
                 : "l"(da), "l"(db), "r"(scale_d))
static __device__ __forceinline__ void wgmma_m64n64k16_bf16(float (&d)[32], uint64_t da,
                                                          uint64_t db, int scale_d)
{
    WGMMA_M64N64("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16", "1, 1, 0, 0");
}
static __device__ __forceinline__ void wgmma_m64n64k8_tf32(float (&d)[32], uint64_t da,
                                                          uint64_t db, int scale_d)
{
    WGMMA_M64N64("wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32", "1, 1");
}
#define WGMMA_M64N128(OPCODE, IMMEDIATES)                               \
    asm volatile("{\n"                                                  \
                 ".reg .pred p;\n"                                      \
                 "setp.ne.b32 p, %66, 0;\n"                             \
                 OPCODE " {"                                            \
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, "             \
                 "%10, %11, %12, %13, %14, %15, %16, %17, %18, %19, "   \
                 "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, "   \
                 "%30, %31, %32, %33, %34, %35, %36, %37, %38, %39, "   \
                 "%40, %41, %42, %43, %44, %45, %46, %47, %48, %49, "   \
                 "%50, %51, %52, %53, %54, %55, %56, %57, %58, %59, "   \
                 "%60, %61, %62, %63"                                   \
                 "}, %64, %65, p, " IMMEDIATES ";\n"                    \
                 "}\n"                                                  \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]),      \
                   "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),      \
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),    \
                   "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),  \
                   "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]),  \
                   "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),  \
                   "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),  \
                   "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),  \
                   "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),  \
                   "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),  \
                   "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]),  \
                   "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),  \
                   "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]),  \
                   "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),  \
                   "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]),  \
                   "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])   \
                 : "l"(da), "l"(db), "r"(scale_d))
static __device__ __forceinline__ void wgmma_m64n128k16_bf16(float (&d)[64], uint64_t da,
                                                          uint64_t db, int scale_d)
{
    WGMMA_M64N128("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16", "1, 1, 0, 0");
}
static __device__ __forceinline__ void wgmma_m64n128k8_tf32(float (&d)[64], uint64_t da,
                                                          uint64_t db, int scale_d)
{
    WGMMA_M64N128("wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32", "1, 1");
}
#define WGMMA_M64N256(OPCODE, IMMEDIATES)                                        \
    asm volatile("{\n"                                                           \
                 ".reg .pred p;\n"                                               \
                 "setp.ne.b32 p, %130, 0;\n"                                     \
                 OPCODE " {"                                                     \
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, "                      \
                 "%10, %11, %12, %13, %14, %15, %16, %17, %18, %19, "            \
                 "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, "            \
                 "%30, %31, %32, %33, %34, %35, %36, %37, %38, %39, "            \
                 "%40, %41, %42, %43, %44, %45, %46, %47, %48, %49, "            \
                 "%50, %51, %52, %53, %54, %55, %56, %57, %58, %59, "            \
                 "%60, %61, %62, %63, %64, %65, %66, %67, %68, %69, "            \
                 "%70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "            \
                 "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, "            \
                 "%90, %91, %92, %93, %94, %95, %96, %97, %98, %99, "            \
                 "%100, %101, %102, %103, %104, %105, %106, %107, %108, %109, "  \
                 "%110, %111, %112, %113, %114, %115, %116, %117, %118, %119, "  \
                 "%120, %121, %122, %123, %124, %125, %126, %127"                \
                 "}, %128, %129, p, " IMMEDIATES ";\n"                           \
                 "}\n"                                                           \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]),               \
                   "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),               \
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),             \
                   "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),           \
                   "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]),           \
                   "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),           \
                   "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),           \
                   "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),           \
                   "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),           \
                   "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),           \
                   "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]),           \
                   "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),           \
                   "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]),           \
                   "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),           \
                   "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]),           \
                   "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),           \
                   "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]),           \
                   "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),           \
                   "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]),           \
                   "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),           \
                   "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]),           \
                   "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),           \
                   "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]),           \
                   "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),           \
                   "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]),           \
                   "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),       \
                   "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]),       \
                   "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),       \
                   "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]),       \
                   "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),       \
                   "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]),       \
                   "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])        \
                 : "l"(da), "l"(db), "r"(scale_d))
static __device__ __forceinline__ void wgmma_m64n256k16_bf16(float (&d)[128], uint64_t da,
                                                          uint64_t db, int scale_d)
{
    WGMMA_M64N256("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16", "1, 1, 0, 0");
}
static __device__ __forceinline__ void wgmma_m64n256k8_tf32(float (&d)[128], uint64_t da,
                                                          uint64_t db, int scale_d)
{
    WGMMA_M64N256("wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32", "1, 1");
}

/* One 64 x BN x (128 bytes of K) step of a consumer warpgroup: four k16 (bf16) or k8 (tf32)
 * wgmmas, each 32 bytes further along the swizzled rows (+2 in the descriptor's address). */
template <typename T, int BN>
static __device__ __forceinline__ void wgmma_step(float (&d)[BN / 2], uint64_t da, uint64_t db,
                                                  int first)
{
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const int acc = !(first && k == 0); /* 0: d = the product (d not read) */
        if constexpr (sizeof(T) == 2) {
            if constexpr (BN == 256) wgmma_m64n256k16_bf16(d, da + 2 * k, db + 2 * k, acc);
            else if constexpr (BN == 128) wgmma_m64n128k16_bf16(d, da + 2 * k, db + 2 * k, acc);
            else wgmma_m64n64k16_bf16(d, da + 2 * k, db + 2 * k, acc);
        } else {
            if constexpr (BN == 256) wgmma_m64n256k8_tf32(d, da + 2 * k, db + 2 * k, acc);
            else if constexpr (BN == 128) wgmma_m64n128k8_tf32(d, da + 2 * k, db + 2 * k, acc);
            else wgmma_m64n64k8_tf32(d, da + 2 * k, db + 2 * k, acc);
        }
    }
}

/* BM 128: two consumer warpgroups of 64 rows; BM 64: one (measured slower at 1024-sized
 * outputs with BN 128, docs/RESULTS.md). MC 2: clusters of two CTAs along N (the same BM
 * rows of A, neighbouring BN columns); each loads half of the A tile and multicasts it to
 * both, so that A crosses from L2 once per cluster (the cluster launched by the caller:
 * launch_ours). */
template <typename T, int BM, int BN, int STAGES, int MC>
static __global__ void __launch_bounds__(128 * (1 + BM / 64), 1)
wgmma_gemm(const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb,
           float *__restrict__ C, const float *__restrict__ bias, int M, int N, int K, int relu)
{
    constexpr int BK = 128 / (int)sizeof(T);       /* 64 bf16 or 32 fp32: 128-byte rows */
    constexpr int A_BYTES = BM * 128, B_BYTES = BN * 128;
    extern __shared__ unsigned char smem_raw[];
    unsigned char *smem = (unsigned char *)(((uintptr_t)smem_raw + 1023) & ~(uintptr_t)1023);
    unsigned char *sA = smem, *sB = smem + STAGES * A_BYTES;
    __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int KT = (K + BK - 1) / BK;
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
                    tma_load_2d_multicast(sA + s * A_BYTES + rank * (BM / MC) * 128, &ta, kt * BK,
                                          m0 + (int)rank * (BM / MC), &full[s],
                                          (uint16_t)((1u << MC) - 1));
                else
                    tma_load_2d(sA + s * A_BYTES, &ta, kt * BK, m0, &full[s]);
                tma_load_2d(sB + s * B_BYTES, &tb, kt * BK, n0, &full[s]);
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

template <typename T, int BM, int BN, int STAGES, int MC>
static void launch_ours(const CUtensorMap &ta, const CUtensorMap &tb, float *C, const float *bias,
                        int M, int N, int K, cudaStream_t st)
{
    const size_t smem = (size_t)STAGES * (BM + BN) * 128 + 1024;
    static bool set = false;
    if (!set) {
        CK(cudaFuncSetAttribute(wgmma_gemm<T, BM, BN, STAGES, MC>,
                                cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        set = true;
    }
    const unsigned gx = (unsigned)((N + BN - 1) / BN);
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((gx + MC - 1) / MC * MC, (M + BM - 1) / BM);
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
    CK(cudaLaunchKernelEx(&cfg, wgmma_gemm<T, BM, BN, STAGES, MC>, ta, tb, C, bias, M, N, K, 1));
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

template <typename T, int BM, int BN, int STAGES, int MC>
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
    auto our_launch = [&]() { launch_ours<T, BM, BN, STAGES, MC>(ta, tb, C, bias, M, N, K, st); };
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
    printf("%s %5dx%5dx%5d BM %3d BN %3d stages %d cluster %d: ours %8.2f us (%6.1f TFLOP/s)  "
           "cuBLASLt %8.2f us "
           "(%6.1f)  ratio %.2f | max|ours-lt| %.2e of %.3g, host sample %.2e, non-finite %zu\n",
           bf ? "bf16" : "tf32", M, N, K, BM, BN, STAGES, MC, t_ours, flop / t_ours / 1e6, t_lt,
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
    }
    return 0;
}
