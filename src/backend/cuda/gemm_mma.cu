/*
 * gemm_mma.cu - the tensor-core SGEMM of --precision tf32 / bf16 (the "fused" and
 * "graph" strategies): mma.sync through inline PTX, fed by a cp.async multi-stage
 * shared-memory pipeline, with gemm.cu's epilogues (gemm.cuh: bias, activation, the
 * activation's derivative, SGD update, row sums; one copy of each formula, there).
 * Interface: ffnn_cuda_gemm_mma in gemm.cuh (ffnn_cuda_gemm calls it for AUTO).
 *
 *   C[M,N] = op(A)[M,K] op(B)[K,N] + epilogue, the three shapes of a dense layer:
 *     forward  x W^T   A [M,K] k-contiguous,  B [N,K] k-contiguous  (trans_b)
 *     dx       dz W    A [M,K] k-contiguous,  B [K,N] n-contiguous
 *     dW       dz^T x  A [K,M] m-contiguous,  B [K,N] n-contiguous  (trans_a)
 *   (and trans_a with trans_b); the transposes are handled by the shared layouts.
 *
 * Arithmetic (fp32 accumulation in every case):
 *   tf32  mma.sync.m16n8k8.row.col.f32.tf32.tf32.f32; each operand element rounded
 *         to TF32 (cvt.rna.tf32.f32, as wmma::__float_to_tf32) when its fragment is
 *         loaded from shared memory.
 *   bf16  mma.sync.m16n8k16.row.col.f32.bf16.bf16.f32; the operands are fp32 in
 *         global and shared memory and rounded to bf16 (round to nearest even,
 *         __floats2bfloat162_rn) when their fragments are built from shared memory
 *         (not on the way into shared memory: cp.async copies bytes, it cannot
 *         convert). The same rounding as the cublas strategy's bf16 copies.
 *
 * Kernel layout (WARPS_M x WARPS_N warps over the block tile; FFNN_GEMM_MMA_*):
 *   config   block tile  BK  stages  warps  warp tile  mma tiles (16x8) per warp
 *   128w4    128 x 128   32  3       4      64 x 64    4 x 8   AUTO, big outputs
 *   64        64 x  64   32  4       8      32 x 16    2 x 2   AUTO, the rest
 *   128      128 x 128   32  3       8      64 x 32    4 x 4
 *   128w4s4  128 x 128   32  4       4      64 x 64    4 x 8
 *   64w4      64 x  64   32  4       4      32 x 32    2 x 4
 *   256      128 x 256   32  3       8      64 x 64    4 x 8
 *   32        32 x  32   32  4       4      16 x 16    1 x 2   AUTO, short K
 *   AUTO (backend/gemm_plan.h) takes 128w4 when its 128 x 128 tiles give every SM a
 *   block, else 64, with K split when 64's tiles do not fill the GPU either and K is
 *   deep, else (short K) 32; 128w4 and 64 measured as the
 *   fastest in the kernel lab on the H200 (`ffnn bench kernels`, 2026-11-24:
 *   4096^3 tf32 946-972 us for 128w4 against 1615-1715 for 128, 977-1204 for 256,
 *   1283-1312 for 128w4s4; 1024^3, 64 tiles of 128: 64 35-38 us, 128w4 45-46). The
 *   others stay for the lab. The shared-memory reads per mma fall with the warp
 *   tile (64 x 64: 16 KiB per 128 x 128 x 8 step against 24 KiB for 64 x 32), which
 *   is what moved 4096^3: the fp32 tiles make these kernels shared-memory bound.
 *   - Global -> shared: cp.async, 16 bytes per copy (.cg) where the operand's
 *     contiguous dimension is a multiple of 4 and its pointer 16-byte aligned, else
 *     4-byte copies (.ca); out-of-range elements zero-filled (src-size 0), so any
 *     M, N, K work (zeros add exact zeros). STAGES-1 tiles are in flight while one
 *     is multiplied (cp.async.wait_group STAGES-2, one __syncthreads per k step).
 *   - Shared layouts follow global memory (cp.async copies rows as they are): an
 *     operand stored k-contiguous is S[row][k] (row stride BK + 4 for tf32, + 8 for
 *     bf16), one stored m/n-contiguous S[k][row] (stride ROWS + 8 for tf32, + 4 for
 *     bf16). The pads make every fragment load below free of bank conflicts:
 *       tf32, S[row][k]: ldmatrix.x4 (8 rows of 16 bytes = 8 x 4 fp32: thread l gets
 *             row l/4, word l%4 - exactly the m16n8k8 A fragment {(g,t), (g+8,t),
 *             (g,t+4), (g+8,t+4)} and two n-tiles' B fragments {(k=t,n=g),
 *             (k=t+4,n=g)}, g = lane/4, t = lane%4), then cvt to tf32.
 *       tf32, S[k][row]: scalar loads (ldmatrix.trans moves 16-bit elements).
 *       bf16: two fp32 per register (k = 2t, 2t+1 and 2t+8, 2t+9): a float2 load
 *             from S[row][k], two scalar loads from S[k][row]; packed to bf16x2.
 *   - Epilogue: accumulator (i, j) holds rows g, g+8 and columns 2t, 2t+1 of a
 *     16 x 8 tile. A plain matmul stores each pair (float2); any other epilogue
 *     stages the block's tile in shared memory and runs gemm_epi_run (gemm.cuh) on
 *     four consecutive columns per call (float4 accesses of C, the bias, X and the
 *     SGD parameters: coalesced, where pairs were not).
 *   - Row sums (db) read the fp32 shared tile of op(A), k ascending: the CPU
 *     reference's order, as gemm.cu.
 * Split-K (gemm_plan.h): each chunk of K is a fixed order of mma k steps, the
 * chunks added in ascending order by gemm.cu's reduction kernel.
 * Deterministic (fixed order of the mma k steps and chunks, no atomics); the sums
 * differ from the fp32 kernels' by the rounding of the inputs and the tensor
 * cores' internal order.
 *
 * Method: the PTX ISA's mma.sync / ldmatrix / cp.async fragment layouts; the
 * multi-stage cp.async pipeline as in CUTLASS's sm80 "multistage" GEMMs.
 */
#include <cuda_bf16.h>

#include "gemm_epilogue.cuh"
#include "mma.cuh"


/* ------------------------------------------------------------------ PTX */

static __device__ __forceinline__ unsigned mma_smem_addr(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

/* 16 bytes global -> shared; bytes 0 zero-fills the destination */
static __device__ __forceinline__ void mma_cp16(float *dst, const float *src, int bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(mma_smem_addr(dst)),
                 "l"(src), "r"(bytes)
                 : "memory");
}

/* 4 bytes global -> shared; bytes 0 zero-fills */
static __device__ __forceinline__ void mma_cp4(float *dst, const float *src, int bytes)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(mma_smem_addr(dst)),
                 "l"(src), "r"(bytes)
                 : "memory");
}

static __device__ __forceinline__ void mma_cp_commit()
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

template <int PENDING>
static __device__ __forceinline__ void mma_cp_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING) : "memory");
}

/* four 8x8 b16 matrices (= 8 x 4 fp32 each); thread l gives the address of row l%8
 * of matrix l/8 */
static __device__ __forceinline__ void mma_ldmatrix_x4(unsigned (&r)[4], const float *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(mma_smem_addr(p)));
}

/* ------------------------------------------------------------------ tiles */

/* The shared row stride of an operand tile (see the top of the file). */
template <int ROWS, int BK, bool K_CONTIG, bool BF16>
struct mma_tile {
    static constexpr int LD = K_CONTIG ? BK + (BF16 ? 8 : 4) : ROWS + (BF16 ? 4 : 8);
    static constexpr int SIZE = (K_CONTIG ? ROWS : BK) * LD; /* floats */
};

/* One operand tile global -> shared by cp.async: rows row0..row0+ROWS-1 (m or n) of
 * op(X), depths k0..k0+BK-1. K_CONTIG: X stored [rows_total, K], S[row][k]; else X
 * stored [K, rows_total], S[k][row]. vec: 16-byte copies allowed (contiguous
 * dimension % 4 == 0, X 16-byte aligned: then a float4 is all in range or all out).
 * Out-of-range elements are zero-filled (their source is X itself, 0 bytes read). */
template <int THREADS, int ROWS, int BK, int LD, bool K_CONTIG>
static __device__ __forceinline__ void mma_load_tile(float *S, const float *__restrict__ X,
                                                     int rows_total, int K, int row0, int k0,
                                                     int tid, int vec)
{
    constexpr int INNER = K_CONTIG ? BK : ROWS; /* the contiguous extent of the tile */
    constexpr int Q = INNER / 4;                /* float4s per shared row */
    constexpr int N4 = ROWS * BK / 4;
    static_assert(N4 % THREADS == 0, "whole float4s per thread");
    const int inner_total = K_CONTIG ? K : rows_total;
    const int outer_total = K_CONTIG ? rows_total : K;
    const int inner0 = K_CONTIG ? k0 : row0, outer0 = K_CONTIG ? row0 : k0;
#pragma unroll
    for (int i = 0; i < N4 / THREADS; ++i) {
        const int f = tid + i * THREADS;
        const int outer = f / Q, inner = (f % Q) * 4;
        const int go = outer0 + outer, gi = inner0 + inner; /* global indices */
        float *dst = S + outer * LD + inner;
        const float *src = X + (size_t)go * inner_total + gi;
        const bool outer_ok = go < outer_total;
        if (vec) {
            const bool ok = outer_ok && gi < inner_total;
            mma_cp16(dst, ok ? src : X, ok ? 16 : 0);
        } else {
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const bool ok = outer_ok && gi + j < inner_total;
                mma_cp4(dst + j, ok ? src + j : X, ok ? 4 : 0);
            }
        }
    }
}

/* A fragments of MI 16-row tiles at rows mb + 16 i, depth kk (one mma k step). */
template <int MI, int LD, bool K_CONTIG, bool BF16>
static __device__ __forceinline__ void mma_frag_a(unsigned (&a)[MI][4], const float *As, int mb,
                                                  int kk, int lane)
{
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int i = 0; i < MI; ++i) {
        const int m = mb + 16 * i;
        if constexpr (!BF16 && K_CONTIG) { /* matrices (rows 0-7 | 8-15) x (k 0-3 | 4-7) */
            const int mat = lane >> 3, r = lane & 7;
            unsigned v[4];
            mma_ldmatrix_x4(v, As + (m + r + (mat & 1) * 8) * LD + kk + (mat >> 1) * 4);
#pragma unroll
            for (int q = 0; q < 4; ++q) a[i][q] = mma_tf32(__uint_as_float(v[q]));
        } else if constexpr (!BF16) { /* S[k][m] */
            a[i][0] = mma_tf32(As[(kk + t) * LD + m + g]);
            a[i][1] = mma_tf32(As[(kk + t) * LD + m + g + 8]);
            a[i][2] = mma_tf32(As[(kk + t + 4) * LD + m + g]);
            a[i][3] = mma_tf32(As[(kk + t + 4) * LD + m + g + 8]);
        } else if constexpr (K_CONTIG) { /* S[m][k]: (k 2t, 2t+1) as one float2 */
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const float2 v =
                    *(const float2 *)(As + (m + g + (q & 1) * 8) * LD + kk + 2 * t + (q >> 1) * 8);
                a[i][q] = mma_bf16x2(v.x, v.y);
            }
        } else { /* S[k][m] */
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const float *p = As + (kk + 2 * t + (q >> 1) * 8) * LD + m + g + (q & 1) * 8;
                a[i][q] = mma_bf16x2(p[0], p[LD]);
            }
        }
    }
}

/* B fragments of NI 8-column tiles at columns nb + 8 j, depth kk. */
template <int NI, int LD, bool K_CONTIG, bool BF16>
static __device__ __forceinline__ void mma_frag_b(unsigned (&b)[NI][2], const float *Bs, int nb,
                                                  int kk, int lane)
{
    const int g = lane >> 2, t = lane & 3;
    if constexpr (!BF16 && K_CONTIG) { /* S[n][k]: two n-tiles per ldmatrix.x4 */
        static_assert(NI % 2 == 0, "n tiles in pairs");
        const int mat = lane >> 3, r = lane & 7;
#pragma unroll
        for (int j = 0; j < NI; j += 2) {
            unsigned v[4];
            mma_ldmatrix_x4(v, Bs + (nb + 8 * j + r + (mat >> 1) * 8) * LD + kk + (mat & 1) * 4);
            b[j][0] = mma_tf32(__uint_as_float(v[0]));
            b[j][1] = mma_tf32(__uint_as_float(v[1]));
            b[j + 1][0] = mma_tf32(__uint_as_float(v[2]));
            b[j + 1][1] = mma_tf32(__uint_as_float(v[3]));
        }
    } else {
#pragma unroll
        for (int j = 0; j < NI; ++j) {
            const int n = nb + 8 * j + g;
            if constexpr (!BF16) { /* S[k][n] */
                b[j][0] = mma_tf32(Bs[(kk + t) * LD + n]);
                b[j][1] = mma_tf32(Bs[(kk + t + 4) * LD + n]);
            } else if constexpr (K_CONTIG) { /* S[n][k] */
                const float2 u = *(const float2 *)(Bs + n * LD + kk + 2 * t);
                const float2 v = *(const float2 *)(Bs + n * LD + kk + 2 * t + 8);
                b[j][0] = mma_bf16x2(u.x, u.y);
                b[j][1] = mma_bf16x2(v.x, v.y);
            } else { /* S[k][n] */
                const float *p = Bs + (kk + 2 * t) * LD + n;
                b[j][0] = mma_bf16x2(p[0], p[LD]);
                b[j][1] = mma_bf16x2(p[8 * LD], p[9 * LD]);
            }
        }
    }
}

/* ------------------------------------------------------------------ epilogue */

/* Row stride of the staged C tile: BN + 8 floats (float4 rows; the float2 writes of
 * the 8 row groups of a warp fall in two bank phases). */
template <int BN> static constexpr __host__ __device__ int mma_c_ld() { return BN + 8; }

/* The epilogue of one block tile (rows m0.., columns n0..) through shared memory:
 * each thread writes its accumulators into the staged tile Cs [BM][BN + 8] (the
 * pipeline's stages, free after the last k step), then the block runs gemm_epi_run
 * over the tile four consecutive columns at a time - coalesced float4 accesses of C
 * and of the epilogue's tensors (vec_ep: N % 4 == 0 and every pointer 16-byte
 * aligned), where the fragment layout would give each thread two columns. The value
 * of every output is the same (the same accumulator through the same formula).
 * Ends with a barrier: the next m tile's prologue overwrites the stages. */
template <int BM, int BN, int THREADS, int WTM, int WTN, int MI, int NI, bool MODELS>
static __device__ __forceinline__ void mma_epilogue_staged(float *Cs, const float (&acc)[MI][NI][4],
                                                           const ffnn_gemm_epilogue &ep, int no_c,
                                                           float *C, int M, int N, int m0,
                                                           int n0, int wm, int wn, int g,
                                                           int t, int vec_ep)
{
    constexpr int LD = mma_c_ld<BN>();
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int j = 0; j < NI; ++j)
                *(float2 *)&Cs[(wm * WTM + 16 * i + g + 8 * h) * LD + wn * WTN + 8 * j + 2 * t] =
                    make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
    __syncthreads();
    for (int e = (int)threadIdx.x * 4; e < BM * BN; e += THREADS * 4) {
        const int r = e / BN, c = e % BN, row = m0 + r, col = n0 + c;
        if (row < M && col < N)
            gemm_epi_run<MODELS>(ep, no_c, C, N, row, col, *(const float4 *)&Cs[r * LD + c],
                                 4, vec_ep && col + 3 < N);
    }
    __syncthreads();
}

/* ------------------------------------------------------------------ kernel */

/* C[M,N] = op(A) op(B) + epilogue for the block tiles (blockIdx.y + j gridDim.y,
 * blockIdx.x); dynamic shared memory STAGES x (A tile + B tile). vec_a / vec_b:
 * 16-byte copies of that operand allowed; vec_c: C takes float2 stores (plain
 * matmul only; the epilogue path stores per element). MODELS: blockIdx.z is model
 * z of the model axis z (ffnn_cuda_gemm_models); else z is unused. */
template <int BM, int BN, int BK, int WARPS_M, int WARPS_N, int STAGES, int MINB, bool BF16,
          bool TRANS_A, bool TRANS_B, bool MODELS>
static __global__ void __launch_bounds__(32 * WARPS_M * WARPS_N, MINB)
gemm_mma_kernel(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,
                int M, int N, int K, int m_tiles, int vec_a, int vec_b, int vec_c,
                int vec_ep, ffnn_gemm_epilogue ep, int k_split, const ffnn_gemm_models z)
{
    constexpr bool A_K = !TRANS_A, B_K = TRANS_B; /* stored k-contiguous */
    typedef mma_tile<BM, BK, A_K, BF16> TA;
    typedef mma_tile<BN, BK, B_K, BF16> TB;
    constexpr int THREADS = 32 * WARPS_M * WARPS_N;
    constexpr int WTM = BM / WARPS_M, WTN = BN / WARPS_N; /* warp tile */
    constexpr int MI = WTM / 16, NI = WTN / 8;           /* mma tiles per warp */
    constexpr int KS = BF16 ? 16 : 8;                    /* depth of one mma */
    static_assert(MI >= 1 && NI >= 2 && BK % KS == 0 && STAGES >= 2, "tile shape");
    static_assert(BM * mma_c_ld<BN>() <= STAGES * (TA::SIZE + TB::SIZE),
                  "the staged C tile fits the pipeline's shared memory");
    extern __shared__ __align__(16) float mma_smem[];

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp % WARPS_M, wn = warp / WARPS_M;
    const int g = lane >> 2, t = lane & 3;
    const int n0 = blockIdx.x * BN;
    const int k_tiles = (K + BK - 1) / BK;
    GEMM_SPLIT_RANGE(kt_begin, kt_end, k_tiles, k_split, MODELS, z, A, B, C, ep, M, N);
    const int n_kt = kt_end - kt_begin; /* this chunk's k tiles; tile kt is kt_begin + kt */
    /* column tile 0 also sums the rows of op(A) (db of the weight gradient) */
    const bool row_sums = blockIdx.x == 0 && gemm_epi_has_rowsum(ep);
    const bool plain = gemm_epi_plain(ep);

    for (int m_tile = blockIdx.y; m_tile < m_tiles; m_tile += gridDim.y) {
        const int m0 = m_tile * BM;
        float acc[MI][NI][4];
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
            for (int j = 0; j < NI; ++j)
#pragma unroll
                for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.0f;
        float rs = 0.0f; /* row sum of row m0 + tid (tid < BM) */

        /* prologue: tiles 0..STAGES-2 in flight (one commit group each, empty past K) */
#pragma unroll
        for (int s = 0; s < STAGES - 1; ++s) {
            if (s < n_kt) {
                float *As = mma_smem + s * (TA::SIZE + TB::SIZE);
                const int k0 = (kt_begin + s) * BK;
                mma_load_tile<THREADS, BM, BK, TA::LD, A_K>(As, A, M, K, m0, k0, tid, vec_a);
                mma_load_tile<THREADS, BN, BK, TB::LD, B_K>(As + TA::SIZE, B, N, K, n0, k0, tid,
                                                            vec_b);
            }
            mma_cp_commit();
        }

        for (int kt = 0; kt < n_kt; ++kt) {
            mma_cp_wait<STAGES - 2>(); /* tile kt has landed (this thread's copies) */
            __syncthreads();           /* everyone's, and tile kt-1 is no longer read */
            {
                const int nk = kt + STAGES - 1; /* into the stage tile kt-1 used */
                if (nk < n_kt) {
                    float *As = mma_smem + (nk % STAGES) * (TA::SIZE + TB::SIZE);
                    const int k0 = (kt_begin + nk) * BK;
                    mma_load_tile<THREADS, BM, BK, TA::LD, A_K>(As, A, M, K, m0, k0, tid, vec_a);
                    mma_load_tile<THREADS, BN, BK, TB::LD, B_K>(As + TA::SIZE, B, N, K, n0, k0,
                                                                tid, vec_b);
                }
                mma_cp_commit();
            }
            const float *As = mma_smem + (kt % STAGES) * (TA::SIZE + TB::SIZE);
            const float *Bs = As + TA::SIZE;
            if (row_sums && tid < BM) {
#pragma unroll
                for (int kk = 0; kk < BK; ++kk)
                    rs = __fadd_rn(rs, A_K ? As[tid * TA::LD + kk] : As[kk * TA::LD + tid]);
            }
#pragma unroll
            for (int kk = 0; kk < BK; kk += KS) {
                unsigned a[MI][4], b[NI][2];
                mma_frag_a<MI, TA::LD, A_K, BF16>(a, As, wm * WTM, kk, lane);
                mma_frag_b<NI, TB::LD, B_K, BF16>(b, Bs, wn * WTN, kk, lane);
#pragma unroll
                for (int i = 0; i < MI; ++i)
#pragma unroll
                    for (int j = 0; j < NI; ++j) {
                        if constexpr (BF16)
                            mma_bf16_op(acc[i][j], a[i], b[j]);
                        else
                            mma_tf32_op(acc[i][j], a[i], b[j]);
                    }
            }
        }
        mma_cp_wait<0>();
        __syncthreads(); /* the next m tile's prologue overwrites the stages */

        if (row_sums && tid < BM && m0 + tid < M) gemm_epi_rowsum(ep, m0 + tid, rs);

        if (!plain) { /* the epilogue from the tile staged in shared memory */
            mma_epilogue_staged<BM, BN, THREADS, WTM, WTN, MI, NI, MODELS>(
                mma_smem, acc, ep, z.no_c, C, M, N, m0, n0, wm, wn, g, t, vec_ep);
            continue;
        }
        /* C: accumulator (i, j) = rows g, g+8 x columns 2t, 2t+1 of its 16 x 8 tile */
#pragma unroll
        for (int i = 0; i < MI; ++i) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int row = m0 + wm * WTM + 16 * i + g + 8 * h;
                if (row >= M) continue;
#pragma unroll
                for (int j = 0; j < NI; ++j) {
                    const int col = n0 + wn * WTN + 8 * j + 2 * t;
                    if (col >= N) continue;
                    float *c = C + (size_t)row * N + col;
                    const float v0 = acc[i][j][2 * h], v1 = acc[i][j][2 * h + 1];
                    if (vec_c) { /* N even: col + 1 < N */
                        *(float2 *)c = make_float2(v0, v1);
                    } else {
                        c[0] = v0;
                        if (col + 1 < N) c[1] = v1;
                    }
                }
            }
        }
    }
}

/* ------------------------------------------------------------------ launch */

static int mma_aligned(const void *p, uintptr_t bytes) { return ((uintptr_t)p & (bytes - 1)) == 0; }

/* Dynamic shared memory of one instantiation: STAGES x (A tile + B tile). */
template <int BM, int BN, int BK, int STAGES, bool BF16, bool TA, bool TB>
static constexpr size_t gemm_mma_smem()
{
    return (size_t)STAGES *
           (mma_tile<BM, BK, !TA, BF16>::SIZE + mma_tile<BN, BK, TB, BF16>::SIZE) *
           sizeof(float);
}

/* Above the 48 KiB default a kernel needs an opt-in: done once per context
 * (ffnn_cuda_gemm_mma_init), outside any stream capture. */
template <int BM, int BN, int BK, int WARPS_M, int WARPS_N, int STAGES, int MINB, bool BF16,
          bool TA, bool TB, bool MODELS>
static ffnn_status gemm_mma_opt_in(ffnn_cuda_ctx *ctx)
{
    FFNN_CUDA_CHECK(ctx, cudaFuncSetAttribute(
                             gemm_mma_kernel<BM, BN, BK, WARPS_M, WARPS_N, STAGES, MINB, BF16,
                                             TA, TB, MODELS>,
                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                             (int)gemm_mma_smem<BM, BN, BK, STAGES, BF16, TA, TB>()));
    return FFNN_OK;
}

template <int BM, int BN, int BK, int WARPS_M, int WARPS_N, int STAGES, int MINB,
          bool MODELS = false>
static ffnn_status gemm_mma_opt_in_all(ffnn_cuda_ctx *ctx)
{
    ffnn_status st = FFNN_OK;
#define MMA_O(BF, X, Y)                                                                   \
    if (st == FFNN_OK)                                                                    \
    st = gemm_mma_opt_in<BM, BN, BK, WARPS_M, WARPS_N, STAGES, MINB, BF, X, Y, MODELS>(ctx)
    MMA_O(false, false, false); MMA_O(false, false, true);
    MMA_O(false, true, false); MMA_O(false, true, true);
    MMA_O(true, false, false); MMA_O(true, false, true);
    MMA_O(true, true, false); MMA_O(true, true, true);
#undef MMA_O
    return st;
}

template <int BM, int BN, int BK, int WARPS_M, int WARPS_N, int STAGES, int MINB, bool BF16,
          bool TA, bool TB, bool MODELS>
static ffnn_status gemm_mma_launch_t(ffnn_cuda_ctx *ctx, const float *A, const float *B,
                                     float *C, int M, int N, int K,
                                     const ffnn_gemm_epilogue &ep, int splits, int k_split,
                                     const ffnn_gemm_models *models)
{
    const size_t smem = gemm_mma_smem<BM, BN, BK, STAGES, BF16, TA, TB>();
    auto kernel =
        gemm_mma_kernel<BM, BN, BK, WARPS_M, WARPS_N, STAGES, MINB, BF16, TA, TB, MODELS>;
    int vec_a = mma_aligned(A, 16) && (TA ? M % 4 == 0 : K % 4 == 0);
    int vec_b = mma_aligned(B, 16) && (TB ? K % 4 == 0 : N % 4 == 0);
    int vec_c = N % 2 == 0 && mma_aligned(C, 8);
    /* the epilogue's float4 accesses (as gemm.cu's) */
    int vec_ep = N % 4 == 0 && mma_aligned(C, 16) &&
                 (ep.bias == NULL || mma_aligned(ep.bias, 16)) &&
                 (ep.dact_x == NULL || mma_aligned(ep.dact_x, 16)) &&
                 (ep.sgd_param == NULL || mma_aligned(ep.sgd_param, 16));
    ffnn_gemm_models z;
    memset(&z, 0, sizeof z);
    if (models != NULL) { /* every model's tensors keep the alignment of the first's */
        z = *models;
        vec_a = vec_a && z.a % 4 == 0;
        vec_b = vec_b && z.b % 4 == 0;
        vec_c = vec_c && z.c % 2 == 0;
        vec_ep = vec_ep && z.c % 4 == 0 && z.bias % 4 == 0 && z.dact_x % 4 == 0 &&
                 z.sgd_param % 4 == 0;
    }
    const int m_tiles = (M + BM - 1) / BM;
    const unsigned grid_y = (unsigned)m_tiles > FFNN_CUDA_MAX_GRID_YZ ? FFNN_CUDA_MAX_GRID_YZ
                                                                     : (unsigned)m_tiles;
    const dim3 grid((unsigned)((N + BN - 1) / BN), grid_y, (unsigned)splits);
    kernel<<<grid, 32 * WARPS_M * WARPS_N, smem, ctx->stream>>>(A, B, C, M, N, K, m_tiles, vec_a,
                                                               vec_b, vec_c, vec_ep, ep,
                                                               k_split, z);
    FFNN_CUDA_LAUNCH_CHECK(ctx, "gemm_mma_kernel");
    return FFNN_OK;
}

/* The transpose flags and the precision as template arguments; MODELS with the
 * model axis `models` (splits = its count). */
template <int BM, int BN, int BK, int WARPS_M, int WARPS_N, int STAGES, int MINB,
          bool MODELS = false>
static ffnn_status gemm_mma_launch(ffnn_cuda_ctx *ctx, const float *A, const float *B, float *C,
                                   int M, int N, int K, int ta, int tb, int bf16,
                                   const ffnn_gemm_epilogue &ep, int splits, int k_split,
                                   const ffnn_gemm_models *models = NULL)
{
#define MMA_L(BF, X, Y)                                                                   \
    gemm_mma_launch_t<BM, BN, BK, WARPS_M, WARPS_N, STAGES, MINB, BF, X, Y, MODELS>(       \
        ctx, A, B, C, M, N, K, ep, splits, k_split, models)
    if (bf16) {
        if (!ta) return tb ? MMA_L(true, false, true) : MMA_L(true, false, false);
        return tb ? MMA_L(true, true, true) : MMA_L(true, true, false);
    }
    if (!ta) return tb ? MMA_L(false, false, true) : MMA_L(false, false, false);
    return tb ? MMA_L(false, true, true) : MMA_L(false, true, false);
#undef MMA_L
}

/* BM, BN, BK, WARPS_M, WARPS_N, STAGES, min blocks per SM (the kernel layout table at
 * the top of the file) */
#define MMA_CFG_128 128, 128, 32, 2, 4, 3, 1
#define MMA_CFG_64 64, 64, 32, 2, 4, 4, 2
#define MMA_CFG_128W4 128, 128, 32, 2, 2, 3, 2
#define MMA_CFG_128W4S4 128, 128, 32, 2, 2, 4, 1
#define MMA_CFG_64W4 64, 64, 32, 2, 2, 4, 2
#define MMA_CFG_256 128, 256, 32, 2, 4, 3, 1
#define MMA_CFG_32 32, 32, 32, 2, 2, 4, 4

/* The model axis z of ffnn_cuda_gemm_mma (ffnn_cuda_gemm_models): grid z = the
 * models, K whole, the tile from three configurations (AUTO:
 * ffnn_cuda_gemm_models_config; a fixed one must be among them). */
static ffnn_status gemm_mma_models(ffnn_cuda_ctx *ctx, const float *A, const float *B, float *C,
                                   int M, int N, int K, int ta, int tb,
                                   const ffnn_gemm_epilogue &e, const ffnn_gemm_models &z,
                                   int config, int bf16)
{
    static const int order[] = {FFNN_GEMM_MMA_128W4, FFNN_GEMM_MMA_64, FFNN_GEMM_MMA_32};
    const int cfg = config == FFNN_GEMM_AUTO
                        ? ffnn_cuda_gemm_models_config(ctx, M, N, z.count, order, 3)
                        : config;
    const int ks = (K + 31) / 32, n = z.count; /* BK = 32 in every configuration */
    switch (cfg) {
    case FFNN_GEMM_MMA_128W4:
        return gemm_mma_launch<MMA_CFG_128W4, true>(ctx, A, B, C, M, N, K, ta, tb, bf16, e, n,
                                                    ks, &z);
    case FFNN_GEMM_MMA_64:
        return gemm_mma_launch<MMA_CFG_64, true>(ctx, A, B, C, M, N, K, ta, tb, bf16, e, n, ks,
                                                 &z);
    case FFNN_GEMM_MMA_32:
        return gemm_mma_launch<MMA_CFG_32, true>(ctx, A, B, C, M, N, K, ta, tb, bf16, e, n, ks,
                                                 &z);
    default:
        return ffnn_fail(FFNN_ERR_UNSUPPORTED, "cuda gemm_mma: config %s has no model axis "
                         "(mma 128x128x32 4 warps, 64x64x32, 32x32x32 have)",
                         ffnn_cuda_gemm_config_name(cfg));
    }
}

extern "C" ffnn_status ffnn_cuda_gemm_mma(ffnn_cuda_ctx *ctx, const float *A, const float *B,
                                          float *C, int M, int N, int K, int trans_a,
                                          int trans_b, const ffnn_gemm_epilogue *ep,
                                          const ffnn_gemm_models *z, int config, int bf16)
{
    FFNN_CUDA_GUARD(ctx, "gemm_mma");
    if (M < 1 || N < 1 || K < 1 || (size_t)M > FFNN_CUDA_MAX_DIM ||
        (size_t)N > FFNN_CUDA_MAX_DIM || (size_t)K > FFNN_CUDA_MAX_DIM)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda gemm_mma: M=%d N=%d K=%d: each must be in 1..%zu", M, N, K,
                         (size_t)FFNN_CUDA_MAX_DIM);
    if (A == NULL || B == NULL || C == NULL)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda gemm_mma: A, B and C must not be NULL");
    ffnn_gemm_epilogue e;
    if (ep != NULL)
        e = *ep;
    else
        memset(&e, 0, sizeof e);
    if (z != NULL)
        return gemm_mma_models(ctx, A, B, C, M, N, K, trans_a, trans_b, e, *z, config, bf16);
    const ffnn_gemm_plan p = ffnn_cuda_gemm_plan(ctx, M, N, K, config, 1);
    if (p.config < FFNN_GEMM_MMA_128 || p.config > FFNN_GEMM_MMA_32)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "cuda gemm_mma: unknown config %d", config);
    /* split: the chunks' partial sums to the workspace, then gemm.cu's reduction +
     * epilogue (BK = 32 in every configuration) */
    const int split = p.splits > 1;
    float *Cs = split ? ctx->split_ws : C;
    const ffnn_gemm_epilogue es = split ? gemm_split_epilogue(ctx, e, M, N, p.splits) : e;
    const int ks = (p.k_chunk + 31) / 32; /* k tiles per chunk */
    const int ta = trans_a, tb = trans_b, sp = p.splits;
    ffnn_status st;
    switch (p.config) {
    case FFNN_GEMM_MMA_128:
        st = gemm_mma_launch<MMA_CFG_128>(ctx, A, B, Cs, M, N, K, ta, tb, bf16, es, sp, ks);
        break;
    case FFNN_GEMM_MMA_64:
        st = gemm_mma_launch<MMA_CFG_64>(ctx, A, B, Cs, M, N, K, ta, tb, bf16, es, sp, ks);
        break;
    case FFNN_GEMM_MMA_128W4:
        st = gemm_mma_launch<MMA_CFG_128W4>(ctx, A, B, Cs, M, N, K, ta, tb, bf16, es, sp, ks);
        break;
    case FFNN_GEMM_MMA_128W4S4:
        st = gemm_mma_launch<MMA_CFG_128W4S4>(ctx, A, B, Cs, M, N, K, ta, tb, bf16, es, sp, ks);
        break;
    case FFNN_GEMM_MMA_64W4:
        st = gemm_mma_launch<MMA_CFG_64W4>(ctx, A, B, Cs, M, N, K, ta, tb, bf16, es, sp, ks);
        break;
    case FFNN_GEMM_MMA_32:
        st = gemm_mma_launch<MMA_CFG_32>(ctx, A, B, Cs, M, N, K, ta, tb, bf16, es, sp, ks);
        break;
    default: /* FFNN_GEMM_MMA_256 */
        st = gemm_mma_launch<MMA_CFG_256>(ctx, A, B, Cs, M, N, K, ta, tb, bf16, es, sp, ks);
        break;
    }
    if (st == FFNN_OK && split) st = ffnn_cuda_gemm_split_reduce(ctx, C, M, N, p.splits, e);
    return st;
}

extern "C" ffnn_status ffnn_cuda_gemm_mma_init(ffnn_cuda_ctx *ctx)
{
    ffnn_status st = gemm_mma_opt_in_all<MMA_CFG_128>(ctx);
    if (st == FFNN_OK) st = gemm_mma_opt_in_all<MMA_CFG_64>(ctx);
    if (st == FFNN_OK) st = gemm_mma_opt_in_all<MMA_CFG_128W4>(ctx);
    if (st == FFNN_OK) st = gemm_mma_opt_in_all<MMA_CFG_128W4S4>(ctx);
    if (st == FFNN_OK) st = gemm_mma_opt_in_all<MMA_CFG_64W4>(ctx);
    if (st == FFNN_OK) st = gemm_mma_opt_in_all<MMA_CFG_256>(ctx);
    if (st == FFNN_OK) st = gemm_mma_opt_in_all<MMA_CFG_32>(ctx);
    /* the model-axis instantiations (gemm_mma_models) */
    if (st == FFNN_OK) st = gemm_mma_opt_in_all<MMA_CFG_128W4, true>(ctx);
    if (st == FFNN_OK) st = gemm_mma_opt_in_all<MMA_CFG_64, true>(ctx);
    if (st == FFNN_OK) st = gemm_mma_opt_in_all<MMA_CFG_32, true>(ctx);
    return st;
}
