/*
 * wgmma.cuh - the Hopper (sm_90a) instructions of our own tensor-core GEMMs, as inline
 * PTX: mbarriers, TMA tile loads (cp.async.bulk.tensor, optionally multicast to a
 * cluster), wgmma's shared-memory matrix descriptors for 128-byte-swizzled K-major
 * tiles, and wgmma.mma_async m64nNk16 (bf16) / m64nNk8 (tf32) with fp32 accumulators.
 * Used by bench/wgmma_lab.cu (and by the fused dx kernel of branch issue-15-wgmma-dx,
 * docs/RESULTS.md session 39); only compiled into sm_90a machine code (the instructions
 * exist nowhere else).
 * Method: the PTX ISA's wgmma (matrix descriptors, the accumulator fragment layout,
 * 128-byte swizzle), cp.async.bulk.tensor and mbarrier sections; the producer/consumer
 * warpgroup split as in CUTLASS's sm90 "warp-specialized" GEMMs.
 */
#ifndef FFNN_BENCH_WGMMA_CUH
#define FFNN_BENCH_WGMMA_CUH

#include <cuda.h>
#include <stdint.h>

#pragma nv_diag_suppress 177 /* the generated wrappers a given kernel does not use */

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

#endif
