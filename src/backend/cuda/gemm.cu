/*
 * gemm.cu - the register-blocked, float4-vectorised FP32 SGEMM of the "fused"
 * strategy, with fused epilogues (bias, activation, activation derivative, SGD
 * update, row sums). Interface, epilogue order and determinism: gemm.cuh.
 *
 * Kernel layout (every configuration: 256 threads as 16 x 16, 1024 values of
 * each operand tile, so every thread moves exactly one float4 of A and one of B
 * per k step):
 *
 *   config  block tile   BK  per thread  k steps of 784  blocks of 64x256
 *   128     128 x 128     8  8 x 8        98              1
 *   64       64 x  64    16  4 x 4        49              4
 *   32       32 x  32    32  2 x 2        25             16
 *   16       16 x  16    64  1 x 1        13             64
 *
 *   - Shared tiles are k-major, As[k][m] and Bs[k][n], rows padded by 4 floats
 *     (keeps float4 alignment, spreads the transposing stores over the banks), two
 *     of each (double buffering): while step t is multiplied from buffer t&1, step
 *     t+1's float4s are in registers on their way to buffer (t+1)&1; one
 *     __syncthreads per step.
 *   - An operand whose contiguous dimension is k (A not transposed, B transposed)
 *     is read as float4 along k and stored transposed (4 scalar stores); one whose
 *     contiguous dimension is m or n is read and stored as float4. The float4 path
 *     needs that dimension % 4 == 0 and a 16-byte aligned pointer, decided per
 *     operand at launch; otherwise the same elements are read one by one with
 *     bounds checks (any M, N, K; out-of-range elements are 0 and add exact zeros).
 *   - Thread (ty, tx) owns rows {ty*4+i, BM/2+ty*4+i} (8x8) or ty*TM+i (TM <= 4)
 *     and the same pattern of columns: fragments come from shared memory as float4
 *     (a warp reads 16 consecutive float4 of Bs and 2 of As: no bank conflicts),
 *     and C is written as float4 where N % 4 == 0 and the pointers are aligned.
 *   - Rows of C tiles beyond 65535 * BM: gridDim.y strides over the M tiles.
 *
 * Napkin math (H200, 132 SMs, ~51 TFLOP/s FP32 FMA): the 8x8 micro-tile does 64
 * FMAs per 4 LDS.128 (16 floats), 4 FMA/float from shared memory - enough to stay
 * FMA-bound; 4096^3 is 137 GFLOP, ~3 ms at 45 TFLOP/s. The seed layers (64 x 784
 * x 256: 26 MFLOP) are latency-bound: what matters there is the number of blocks
 * in flight, hence the small configurations.
 * Measured (`ffnn bench kernels`, H200, docs/kernels_table.md): 4096^3
 * 39-42 TFLOP/s (tiled 23, cuBLAS 50-52); 1024^3 28-30 TFLOP/s (cuBLAS 36-39);
 * 64 x 784 -> 256 forward 13.6 us (tiled 14.0, cuBLAS 9.8: latency-bound, cuBLAS
 * splits K). The fused epilogues cost 0-2 us on the seed layers, ~1-15% at 1024^3.
 * The 128 configuration runs at 128 registers (2 blocks per SM, 4 bytes spilled).
 */
#include <mma.h>

#include "gemm_epilogue.cuh"

#define GEMM_THREADS 256

/* ------------------------------------------------------------------ loads */

/* Four consecutive floats p[0..3] -> r, for gemm_load: element i is in range when
 * line_ok (its row, or its depth, exists) and i < left (the elements left along the
 * contiguous dimension); out-of-range elements read as 0 and are not touched.
 * vec: the contiguous dimension is a multiple of 4, so the float4 is all in range
 * or all out, and p is 16-byte aligned. */
static __device__ __forceinline__ void load_quad(const float *__restrict__ p, int vec,
                                                 bool line_ok, int left, float (&r)[4])
{
    if (vec) {
        if (line_ok && left > 0) {
            const float4 v = __ldg((const float4 *)p);
            r[0] = v.x, r[1] = v.y, r[2] = v.z, r[3] = v.w;
        } else {
            r[0] = r[1] = r[2] = r[3] = 0.0f;
        }
    } else {
#pragma unroll
        for (int i = 0; i < 4; ++i) r[i] = (line_ok && i < left) ? __ldg(p + i) : 0.0f;
    }
}

/* One thread's share (4 consecutive elements) of one operand tile, global ->
 * registers. The operand op(X) has ROWS_TOTAL rows (m or n) and depth K.
 * K_CONTIG: X stored [rows_total, K] (k contiguous), else [K, rows_total].
 * The tile holds rows row0..row0+ROWS-1 and depths k0..k0+BK-1; this thread's
 * float4 is number tid of ROWS*BK/4 = 256. Out-of-range elements read as 0. */
template <int ROWS, int BK, bool K_CONTIG>
static __device__ __forceinline__ void gemm_load(const float *__restrict__ X, int rows_total,
                                                 int K, int row0, int k0, int tid, int vec,
                                                 float (&r)[4])
{
    if (K_CONTIG) {
        const int row = row0 + tid / (BK / 4);
        const int k = k0 + (tid % (BK / 4)) * 4;
        load_quad(X + (size_t)row * K + k, vec, row < rows_total, K - k, r);
    } else {
        const int k = k0 + tid / (ROWS / 4);
        const int row = row0 + (tid % (ROWS / 4)) * 4;
        load_quad(X + (size_t)k * rows_total + row, vec, k < K, rows_total - row, r);
    }
}

/* Registers -> the k-major shared tile S[k][row] (row stride ROWS + 4), the
 * element placement of gemm_load. */
template <int ROWS, int BK, bool K_CONTIG>
static __device__ __forceinline__ void gemm_store(float (*S)[ROWS + 4], int tid,
                                                  const float (&r)[4])
{
    if (K_CONTIG) {
        const int row = tid / (BK / 4);
        const int k = (tid % (BK / 4)) * 4;
#pragma unroll
        for (int i = 0; i < 4; ++i) S[k + i][row] = r[i];
    } else {
        const int k = tid / (ROWS / 4);
        const int row = (tid % (ROWS / 4)) * 4;
        *(float4 *)&S[k][row] = make_float4(r[0], r[1], r[2], r[3]);
    }
}

/* Offset inside the block tile of this thread's i-th row (or column): two strips
 * of 4 at t*4 and EDGE/2 + t*4 for T = 8, else T consecutive at t*T. */
template <int T, int EDGE>
static __device__ __forceinline__ int gemm_pos(int t, int i)
{
    return T == 8 ? (i < 4 ? t * 4 + i : EDGE / 2 + t * 4 + (i - 4)) : t * T + i;
}

/* The T values of shared row S (one k) this thread multiplies, as wide loads. */
template <int T, int EDGE>
static __device__ __forceinline__ void gemm_frag(const float *S, int t, float (&f)[T])
{
    if constexpr (T == 8) {
        const float4 u = *(const float4 *)(S + t * 4);
        const float4 v = *(const float4 *)(S + EDGE / 2 + t * 4);
        f[0] = u.x, f[1] = u.y, f[2] = u.z, f[3] = u.w;
        f[4] = v.x, f[5] = v.y, f[6] = v.z, f[7] = v.w;
    } else if constexpr (T == 4) {
        const float4 u = *(const float4 *)(S + t * 4);
        f[0] = u.x, f[1] = u.y, f[2] = u.z, f[3] = u.w;
    } else if constexpr (T == 2) {
        const float2 u = *(const float2 *)(S + t * 2);
        f[0] = u.x, f[1] = u.y;
    } else {
        f[0] = S[t];
    }
}

/* The per-element epilogue (gemm_epi_value, gemm_epi_run) is gemm_epilogue.cuh's,
 * shared with gemm_mma.cu. */

/* Strip s (SW = 1, 2 or 4 consecutive values) of a micro-tile row, as a float4
 * (unused lanes 0). */
template <int SW, int TN>
static __device__ __forceinline__ float4 gemm_strip(const float (&row)[TN], int s)
{
    float4 v = make_float4(row[s * SW], 0.0f, 0.0f, 0.0f);
    if constexpr (SW > 1) v.y = row[s * SW + 1];
    if constexpr (SW > 3) v.z = row[s * SW + 2], v.w = row[s * SW + 3];
    return v;
}

/* ------------------------------------------------------------------ kernel */

/* C[M,N] = op(A) op(B) + epilogue for the block tiles (blockIdx.y + j*gridDim.y,
 * blockIdx.x). A, B, C as gemm.cuh; vec_a / vec_b: that operand's float4 loads
 * are allowed; vec_c: C (and bias, dact_x, sgd_param) take float4 accesses.
 * MODELS: blockIdx.z is model z of the model axis z (ffnn_cuda_gemm_models); else
 * z is unused and blockIdx.z a K chunk. */
template <int BM, int BN, int BK, int TM, int TN, bool TRANS_A, bool TRANS_B, bool MODELS>
static __global__ void __launch_bounds__(GEMM_THREADS, BM == 128 ? 2 : 1)
gemm_kernel(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,
            int M, int N, int K, int m_tiles, int vec_a, int vec_b, int vec_c,
            ffnn_gemm_epilogue ep, int k_split, const ffnn_gemm_models z)
{
    static_assert((BM / TM) * (BN / TN) == GEMM_THREADS, "256 threads per block");
    static_assert(BM * BK == 4 * GEMM_THREADS && BN * BK == 4 * GEMM_THREADS,
                  "one float4 of each operand per thread and k step");
    constexpr int TX = BN / TN; /* threads along the columns */

    __shared__ __align__(16) float As[2][BK][BM + 4]; /* As[.][k][m] = op(A)[m0+m, k0+k] */
    __shared__ __align__(16) float Bs[2][BK][BN + 4]; /* Bs[.][k][n] = op(B)[k0+k, n0+n] */

    const int tid = threadIdx.x;
    const int tx = tid % TX, ty = tid / TX;
    const int n0 = blockIdx.x * BN;
    const int k_tiles = (K + BK - 1) / BK;
    GEMM_SPLIT_RANGE(kt_begin, kt_end, k_tiles, k_split, MODELS, z, A, B, C, ep, M, N);
    /* column tile 0 also sums the rows of op(A) (db of the weight gradient) */
    const bool row_sums = blockIdx.x == 0 && gemm_epi_has_rowsum(ep);
    const bool plain = gemm_epi_plain(ep);

    for (int m_tile = blockIdx.y; m_tile < m_tiles; m_tile += gridDim.y) {
        const int m0 = m_tile * BM;
        float acc[TM][TN];
        ffnn_cuda_zero_tile(acc);
        float rs = 0.0f; /* row sum of row m0 + tid (tid < BM) */

        float ra[4], rb[4];
        gemm_load<BM, BK, !TRANS_A>(A, M, K, m0, kt_begin * BK, tid, vec_a, ra);
        gemm_load<BN, BK, TRANS_B>(B, N, K, n0, kt_begin * BK, tid, vec_b, rb);
        gemm_store<BM, BK, !TRANS_A>(As[0], tid, ra);
        gemm_store<BN, BK, TRANS_B>(Bs[0], tid, rb);
        __syncthreads();

        for (int kt = kt_begin; kt < kt_end; ++kt) {
            const int cur = (kt - kt_begin) & 1;
            const bool more = kt + 1 < kt_end;
            if (more) { /* in flight while this step is multiplied */
                gemm_load<BM, BK, !TRANS_A>(A, M, K, m0, (kt + 1) * BK, tid, vec_a, ra);
                gemm_load<BN, BK, TRANS_B>(B, N, K, n0, (kt + 1) * BK, tid, vec_b, rb);
            }
            if (row_sums && tid < BM) {
#pragma unroll
                for (int kk = 0; kk < BK; ++kk) rs = __fadd_rn(rs, As[cur][kk][tid]);
            }
#pragma unroll
            for (int kk = 0; kk < BK; ++kk) {
                float a[TM], b[TN];
                gemm_frag<TM, BM>(As[cur][kk], ty, a);
                gemm_frag<TN, BN>(Bs[cur][kk], tx, b);
#pragma unroll
                for (int i = 0; i < TM; ++i)
#pragma unroll
                    for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
            }
            if (more) {
                gemm_store<BM, BK, !TRANS_A>(As[cur ^ 1], tid, ra);
                gemm_store<BN, BK, TRANS_B>(Bs[cur ^ 1], tid, rb);
            }
            __syncthreads();
        }

        if (row_sums && tid < BM && m0 + tid < M) gemm_epi_rowsum(ep, m0 + tid, rs);

        /* C: strips of up to 4 consecutive columns per row of the micro-tile */
        constexpr int SW = TN >= 4 ? 4 : TN; /* strip width */
#pragma unroll
        for (int i = 0; i < TM; ++i) {
            const int row = m0 + gemm_pos<TM, BM>(ty, i);
            if (row >= M) continue;
#pragma unroll
            for (int s = 0; s < TN / SW; ++s) {
                const int col = n0 + gemm_pos<TN, BN>(tx, s * SW);
                const int vec4 = SW == 4 && vec_c && col + 3 < N;
                const float4 v = gemm_strip<SW, TN>(acc[i], s);
                if (plain) {
                    float *c = C + (size_t)row * N + col;
                    if (vec4) {
                        *(float4 *)c = v;
                    } else {
                        const float f[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
                        for (int j = 0; j < SW; ++j)
                            if (col + j < N) c[j] = f[j];
                    }
                } else {
                    gemm_epi_run<MODELS>(ep, z.no_c, C, N, row, col, v, SW, vec4);
                }
            }
        }
    }
}

/* ------------------------------------------------------------------ TF32 kernel */

/* A wmma operand fragment from shared memory p (leading dimension ld), its
 * elements rounded to TF32 (wmma::__float_to_tf32), for the tf32 kernel below. */
template <typename Frag>
static __device__ __forceinline__ void load_tf32(Frag &f, const float *p, unsigned ld)
{
    nvcuda::wmma::load_matrix_sync(f, p, ld);
#pragma unroll
    for (int e = 0; e < f.num_elements; ++e) f.x[e] = nvcuda::wmma::__float_to_tf32(f.x[e]);
}

/* The first --precision tf32 kernel (now FFNN_GEMM_TF32_* only: AUTO takes
 * gemm_mma.cu; kept as the kernel lab's wmma_tf32 row): the same tiles, loads, row
 * sums and epilogue as gemm_kernel,
 * the products on tensor cores (wmma m16n16k8, inputs rounded to TF32 with
 * __float_to_tf32, fp32 accumulation). BM x BN block tile (128 or 64), BK = 16,
 * 8 warps as 2 (rows) x 4 (columns), each a (BM/2) x (BN/4) tile of 16 x 16
 * accumulator fragments. Shared tiles k-major as gemm_kernel's: As[k][m] is
 * matrix_a in col_major order, Bs[k][n] matrix_b in row_major order (ldm BM+4,
 * BN+4: multiples of 4, fragments at 32-byte boundaries). The epilogue stages
 * each fragment through 16 x 20 floats of the warp's own shared memory (the
 * tiles' space, free after the k loop), then runs gemm_epi_run on 2 strips of 4
 * per lane (As and Bs share one array so the staging fits for BM = 64 too).
 * Deterministic (fixed fragment order; split only when the lab forces it); the sums differ
 * from the fp32 kernel's by the TF32 rounding of the inputs. */
template <int BM, int BN, bool TRANS_A, bool TRANS_B, bool MODELS>
static __global__ void __launch_bounds__(GEMM_THREADS, 1)
gemm_tf32_kernel(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,
                 int M, int N, int K, int m_tiles, int vec_a, int vec_b, int vec_c,
                 ffnn_gemm_epilogue ep, int k_split, const ffnn_gemm_models z)
{
    namespace wmma = nvcuda::wmma;
    constexpr int BK = 16;
    constexpr int SUB_A = 4 * GEMM_THREADS / BM; /* depth one float4 per thread covers */
    constexpr int SUB_B = 4 * GEMM_THREADS / BN;
    constexpr int LA = BK / SUB_A, LB = BK / SUB_B; /* float4 loads per thread and step */
    constexpr int WM = BM / 2, WN = BN / 4, FM = WM / 16, FN = WN / 16;
    static_assert(FM >= 1 && FN >= 1 && LA >= 1 && LB >= 1, "tile shape");
    constexpr int SMEM = 2 * BK * (BM + 4) + 2 * BK * (BN + 4);
    static_assert(SMEM >= 8 * 16 * 20, "epilogue staging fits in the tiles' space");

    __shared__ __align__(32) float smem[SMEM];
    float(*As)[BK][BM + 4] = (float(*)[BK][BM + 4])smem;                      /* [2] */
    float(*Bs)[BK][BN + 4] = (float(*)[BK][BN + 4])(smem + 2 * BK * (BM + 4)); /* [2] */

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp / 4, wn = warp % 4;
    const int n0 = blockIdx.x * BN;
    const int k_tiles = (K + BK - 1) / BK;
    GEMM_SPLIT_RANGE(kt_begin, kt_end, k_tiles, k_split, MODELS, z, A, B, C, ep, M, N);
    const bool row_sums = blockIdx.x == 0 && gemm_epi_has_rowsum(ep);
    const bool plain = gemm_epi_plain(ep);
    float *stage = smem + warp * (16 * 20);

    for (int m_tile = blockIdx.y; m_tile < m_tiles; m_tile += gridDim.y) {
        const int m0 = m_tile * BM;
        wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc[FM][FN];
#pragma unroll
        for (int i = 0; i < FM; ++i)
#pragma unroll
            for (int j = 0; j < FN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
        float rs = 0.0f;

        float ra[LA][4], rb[LB][4];
#pragma unroll
        for (int l = 0; l < LA; ++l) {
            gemm_load<BM, SUB_A, !TRANS_A>(A, M, K, m0, kt_begin * BK + l * SUB_A, tid, vec_a,
                                           ra[l]);
            gemm_store<BM, SUB_A, !TRANS_A>(
                (float(*)[BM + 4]) & As[0][l * SUB_A][0], tid, ra[l]);
        }
#pragma unroll
        for (int l = 0; l < LB; ++l) {
            gemm_load<BN, SUB_B, TRANS_B>(B, N, K, n0, kt_begin * BK + l * SUB_B, tid, vec_b,
                                          rb[l]);
            gemm_store<BN, SUB_B, TRANS_B>(
                (float(*)[BN + 4]) & Bs[0][l * SUB_B][0], tid, rb[l]);
        }
        __syncthreads();

        for (int kt = kt_begin; kt < kt_end; ++kt) {
            const int cur = (kt - kt_begin) & 1;
            const bool more = kt + 1 < kt_end;
            if (more) {
#pragma unroll
                for (int l = 0; l < LA; ++l)
                    gemm_load<BM, SUB_A, !TRANS_A>(A, M, K, m0, (kt + 1) * BK + l * SUB_A, tid,
                                                   vec_a, ra[l]);
#pragma unroll
                for (int l = 0; l < LB; ++l)
                    gemm_load<BN, SUB_B, TRANS_B>(B, N, K, n0, (kt + 1) * BK + l * SUB_B, tid,
                                                  vec_b, rb[l]);
            }
            if (row_sums && tid < BM) {
#pragma unroll
                for (int kk = 0; kk < BK; ++kk) rs = __fadd_rn(rs, As[cur][kk][tid]);
            }
#pragma unroll
            for (int kk = 0; kk < BK; kk += 8) {
                wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32,
                               wmma::col_major> af[FM];
                wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32,
                               wmma::row_major> bf[FN];
#pragma unroll
                for (int i = 0; i < FM; ++i)
                    load_tf32(af[i], &As[cur][kk][wm * WM + i * 16], BM + 4);
#pragma unroll
                for (int j = 0; j < FN; ++j)
                    load_tf32(bf[j], &Bs[cur][kk][wn * WN + j * 16], BN + 4);
#pragma unroll
                for (int i = 0; i < FM; ++i)
#pragma unroll
                    for (int j = 0; j < FN; ++j) wmma::mma_sync(acc[i][j], af[i], bf[j], acc[i][j]);
            }
            if (more) {
#pragma unroll
                for (int l = 0; l < LA; ++l)
                    gemm_store<BM, SUB_A, !TRANS_A>(
                        (float(*)[BM + 4]) & As[cur ^ 1][l * SUB_A][0], tid, ra[l]);
#pragma unroll
                for (int l = 0; l < LB; ++l)
                    gemm_store<BN, SUB_B, TRANS_B>(
                        (float(*)[BN + 4]) & Bs[cur ^ 1][l * SUB_B][0], tid, rb[l]);
            }
            __syncthreads();
        }

        if (row_sums && tid < BM && m0 + tid < M) gemm_epi_rowsum(ep, m0 + tid, rs);

        /* epilogue: fragment by fragment through the warp's staging tile */
#pragma unroll
        for (int i = 0; i < FM; ++i) {
#pragma unroll
            for (int j = 0; j < FN; ++j) {
                wmma::store_matrix_sync(stage, acc[i][j], 20, wmma::mem_row_major);
                __syncwarp();
                const int r = lane / 2, c = (lane % 2) * 8;
                const int row = m0 + wm * WM + i * 16 + r;
                if (row < M) {
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        const int col = n0 + wn * WN + j * 16 + c + 4 * h;
                        if (col >= N) continue;
                        const float4 v = *(const float4 *)(stage + r * 20 + c + 4 * h);
                        const int vec4 = vec_c && col + 3 < N;
                        if (plain) {
                            float *cp = C + (size_t)row * N + col;
                            if (vec4) {
                                *(float4 *)cp = v;
                            } else {
                                const float f[4] = {v.x, v.y, v.z, v.w};
                                for (int q = 0; q < 4 && col + q < N; ++q) cp[q] = f[q];
                            }
                        } else {
                            gemm_epi_run<MODELS>(ep, z.no_c, C, N, row, col, v, 4, vec4);
                        }
                    }
                }
                __syncwarp();
            }
        }
        __syncthreads(); /* the staging tiles are the next m tile's operand tiles */
    }
}

/* ------------------------------------------------------------------ launch */

static int aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

/* What both kernels' launches compute from the operands: float4 permissions
 * (each operand's contiguous dimension % 4 == 0 and 16-byte aligned; C with the
 * epilogue's tensors) and the grid (gridDim.y strides over M tiles past 65535). */
typedef struct gemm_shape {
    int vec_a, vec_b, vec_c, m_tiles;
    dim3 grid;
} gemm_shape;

static gemm_shape gemm_shape_of(const float *A, const float *B, const float *C, int M, int N,
                                int K, int trans_a, int trans_b, const ffnn_gemm_epilogue &ep,
                                const ffnn_gemm_models *models, int BM, int BN, int splits)
{
    gemm_shape g;
    g.vec_a = aligned16(A) && (trans_a ? M % 4 == 0 : K % 4 == 0);
    g.vec_b = aligned16(B) && (trans_b ? K % 4 == 0 : N % 4 == 0);
    g.vec_c = N % 4 == 0 && aligned16(C) && (ep.bias == NULL || aligned16(ep.bias)) &&
              (ep.dact_x == NULL || aligned16(ep.dact_x)) &&
              (ep.sgd_param == NULL || aligned16(ep.sgd_param));
    if (models != NULL) { /* every model's tensors keep the alignment of the first's */
        const ffnn_gemm_models &z = *models;
        g.vec_a = g.vec_a && z.a % 4 == 0;
        g.vec_b = g.vec_b && z.b % 4 == 0;
        g.vec_c = g.vec_c && z.c % 4 == 0 && z.bias % 4 == 0 && z.dact_x % 4 == 0 &&
                  z.sgd_param % 4 == 0;
    }
    g.m_tiles = (M + BM - 1) / BM;
    const unsigned grid_y = (unsigned)g.m_tiles > FFNN_CUDA_MAX_GRID_YZ ? FFNN_CUDA_MAX_GRID_YZ
                                                                        : (unsigned)g.m_tiles;
    g.grid = dim3((unsigned)((N + BN - 1) / BN), grid_y, (unsigned)splits);
    return g;
}

/* Launch KERNEL<..., TA, TB, MODELS> for the transpose flags (a macro: the two
 * kernels take different template parameter lists before the flags); MODELS with
 * the model axis `models` (else NULL). */
#define GEMM_LAUNCH_4(KERNEL, MODELS, ...)                                                \
    do {                                                                                  \
        const gemm_shape g_ = gemm_shape_of(A, B, C, M, N, K, trans_a, trans_b, ep,       \
                                            models, BM, BN, splits);                      \
        ffnn_gemm_models z_;                                                              \
        if (models != NULL) z_ = *models;                                                 \
        else memset(&z_, 0, sizeof z_);                                                   \
        cudaStream_t s_ = ctx->stream;                                                    \
        if (!trans_a && !trans_b)                                                         \
            KERNEL<__VA_ARGS__, false, false, MODELS><<<g_.grid, GEMM_THREADS, 0, s_>>>(   \
                A, B, C, M, N, K, g_.m_tiles, g_.vec_a, g_.vec_b, g_.vec_c, ep, k_split,  \
                z_);                                                                      \
        else if (!trans_a && trans_b)                                                     \
            KERNEL<__VA_ARGS__, false, true, MODELS><<<g_.grid, GEMM_THREADS, 0, s_>>>(    \
                A, B, C, M, N, K, g_.m_tiles, g_.vec_a, g_.vec_b, g_.vec_c, ep, k_split,  \
                z_);                                                                      \
        else if (trans_a && !trans_b)                                                     \
            KERNEL<__VA_ARGS__, true, false, MODELS><<<g_.grid, GEMM_THREADS, 0, s_>>>(    \
                A, B, C, M, N, K, g_.m_tiles, g_.vec_a, g_.vec_b, g_.vec_c, ep, k_split,  \
                z_);                                                                      \
        else                                                                              \
            KERNEL<__VA_ARGS__, true, true, MODELS><<<g_.grid, GEMM_THREADS, 0, s_>>>(     \
                A, B, C, M, N, K, g_.m_tiles, g_.vec_a, g_.vec_b, g_.vec_c, ep, k_split,  \
                z_);                                                                      \
        FFNN_CUDA_LAUNCH_CHECK(ctx, #KERNEL);                                             \
    } while (0)

/* splits chunks of k_split k tiles each (1 and all of them when unsplit); MODELS:
 * grid z over the models of `models` instead (splits = their count, K whole). */
template <int BM, int BN, int BK, int TM, int TN, bool MODELS = false>
static ffnn_status gemm_launch(ffnn_cuda_ctx *ctx, const float *A, const float *B, float *C,
                               int M, int N, int K, int trans_a, int trans_b,
                               const ffnn_gemm_epilogue &ep, int splits, int k_split,
                               const ffnn_gemm_models *models = NULL)
{
    GEMM_LAUNCH_4(gemm_kernel, MODELS, BM, BN, BK, TM, TN);
    return FFNN_OK;
}

template <int BM, int BN>
static ffnn_status gemm_tf32_launch(ffnn_cuda_ctx *ctx, const float *A, const float *B, float *C,
                                    int M, int N, int K, int trans_a, int trans_b,
                                    const ffnn_gemm_epilogue &ep, int splits, int k_split)
{
    const ffnn_gemm_models *models = NULL;
    GEMM_LAUNCH_4(gemm_tf32_kernel, false, BM, BN);
    return FFNN_OK;
}

/* ------------------------------------------------------------------ split-K */

/* The second kernel of a split matmul (gemm.cuh ffnn_cuda_gemm_split_reduce):
 * thread i < M ceil(N/4) adds the chunks of row i / ceil(N/4), columns
 * 4 (i % ceil(N/4)) .. +3, in ascending chunk order and runs the epilogue on them;
 * the next M threads (when rows) add the partial row sums the same way. vec: N % 4
 * == 0 and C and the epilogue's tensors 16-byte aligned (float4 accesses).
 * splits <= FFNN_GEMM_MAX_SPLITS (the plan's bound). */
static __global__ void gemm_split_reduce_kernel(const float *__restrict__ P, int splits,
                                                float *__restrict__ C, int M, int N, int vec,
                                                int rows, ffnn_gemm_epilogue ep)
{
    const size_t stride = gemm_split_stride(M, N);
    const int n4 = (N + 3) / 4;
    const size_t elems = (size_t)M * n4;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < elems) {
        const int row = (int)(i / n4), col = (int)(i % n4) * 4;
        const int w = N - col < 4 ? N - col : 4;
        const size_t idx = (size_t)row * N + col;
        /* every chunk's load in flight at once (one L2 round trip, not splits of
         * them: 6.5 -> ~2 us for 16 chunks of 128 x 128), then the adds in order */
        float4 q[FFNN_GEMM_MAX_SPLITS];
#pragma unroll
        for (int z = 0; z < FFNN_GEMM_MAX_SPLITS; ++z) {
            q[z] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            if (z >= splits) continue;
            const float *p = P + z * stride + idx;
            if (vec) {
                q[z] = *(const float4 *)p;
            } else {
                q[z].x = p[0];
                if (w > 1) q[z].y = p[1];
                if (w > 2) q[z].z = p[2];
                if (w > 3) q[z].w = p[3];
            }
        }
        float4 a = q[0];
#pragma unroll
        for (int z = 1; z < FFNN_GEMM_MAX_SPLITS; ++z) {
            if (z >= splits) break;
            a.x = __fadd_rn(a.x, q[z].x), a.y = __fadd_rn(a.y, q[z].y);
            a.z = __fadd_rn(a.z, q[z].z), a.w = __fadd_rn(a.w, q[z].w);
        }
        gemm_epi_run<false>(ep, 0, C, N, row, col, a, w, vec);
        return;
    }
    i -= elems;
    if (rows && i < (size_t)M) {
        const float *R = P + (size_t)splits * stride;
        float r[FFNN_GEMM_MAX_SPLITS];
#pragma unroll
        for (int z = 0; z < FFNN_GEMM_MAX_SPLITS; ++z)
            r[z] = z < splits ? R[(size_t)z * M + i] : 0.0f;
        float rs = r[0];
#pragma unroll
        for (int z = 1; z < FFNN_GEMM_MAX_SPLITS; ++z) {
            if (z >= splits) break;
            rs = __fadd_rn(rs, r[z]);
        }
        gemm_epi_rowsum(ep, (int)i, rs);
    }
}

ffnn_status ffnn_cuda_gemm_split_reduce(ffnn_cuda_ctx *ctx, float *C, int M, int N, int splits,
                                        const ffnn_gemm_epilogue &ep)
{
    const int vec = N % 4 == 0 && aligned16(C) && (ep.bias == NULL || aligned16(ep.bias)) &&
                    (ep.dact_x == NULL || aligned16(ep.dact_x)) &&
                    (ep.sgd_param == NULL || aligned16(ep.sgd_param));
    const int rows = gemm_epi_has_rowsum(ep);
    const size_t total = (size_t)M * ((N + 3) / 4) + (rows ? (size_t)M : 0);
    const unsigned blocks = (unsigned)((total + GEMM_THREADS - 1) / GEMM_THREADS);
    gemm_split_reduce_kernel<<<blocks, GEMM_THREADS, 0, ctx->stream>>>(ctx->split_ws, splits, C,
                                                                       M, N, vec, rows, ep);
    FFNN_CUDA_LAUNCH_CHECK(ctx, "gemm_split_reduce_kernel");
    return FFNN_OK;
}

extern "C" ffnn_gemm_plan ffnn_cuda_gemm_plan(const ffnn_cuda_ctx *ctx, int M, int N, int K,
                                              int config, int tensor_cores)
{
    return ffnn_gemm_plan_for(ctx != NULL ? ctx->sm_count : 1, M, N, K, config, tensor_cores,
                              ctx != NULL ? ctx->gemm_splits : 0);
}

extern "C" const char *ffnn_cuda_gemm_config_name(int config)
{
    switch (config) {
    case FFNN_GEMM_128: return "128x128x8";
    case FFNN_GEMM_64: return "64x64x16";
    case FFNN_GEMM_32: return "32x32x32";
    case FFNN_GEMM_16: return "16x16x64";
    case FFNN_GEMM_TF32_128: return "tf32 128x128x16";
    case FFNN_GEMM_TF32_64: return "tf32 64x64x16";
    case FFNN_GEMM_MMA_128: return "mma 128x128x32 3-stage";
    case FFNN_GEMM_MMA_64: return "mma 64x64x32 4-stage";
    case FFNN_GEMM_MMA_128W4: return "mma 128x128x32 4 warps 3-stage";
    case FFNN_GEMM_MMA_128W4S4: return "mma 128x128x32 4 warps 4-stage";
    case FFNN_GEMM_MMA_64W4: return "mma 64x64x32 4 warps 4-stage";
    case FFNN_GEMM_MMA_256: return "mma 128x256x32 8 warps 3-stage";
    case FFNN_GEMM_MMA_32: return "mma 32x32x32 4 warps 4-stage";
    default: return "auto";
    }
}

extern "C" ffnn_status ffnn_cuda_gemm(ffnn_cuda_ctx *ctx, const float *A, const float *B,
                                      float *C, int M, int N, int K, int trans_a, int trans_b,
                                      const ffnn_gemm_epilogue *ep, int config)
{
    FFNN_CUDA_GUARD(ctx, "gemm");
    if (M < 1 || N < 1 || K < 1 || (size_t)M > FFNN_CUDA_MAX_DIM ||
        (size_t)N > FFNN_CUDA_MAX_DIM || (size_t)K > FFNN_CUDA_MAX_DIM)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda gemm: M=%d N=%d K=%d: each must be in 1..%zu", M, N, K,
                         (size_t)FFNN_CUDA_MAX_DIM);
    if (A == NULL || B == NULL || C == NULL)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "cuda gemm: A, B and C must not be NULL");
    ffnn_gemm_epilogue e;
    if (ep != NULL)
        e = *ep;
    else
        memset(&e, 0, sizeof e);
    /* tensor cores: gemm_mma.cu (mma.sync, cp.async pipeline) */
    if ((config == FFNN_GEMM_AUTO && (ctx->precision == FFNN_PRECISION_TF32 ||
                                      ctx->precision == FFNN_PRECISION_BF16)) ||
        (config >= FFNN_GEMM_MMA_128 && config <= FFNN_GEMM_MMA_32))
        return ffnn_cuda_gemm_mma(ctx, A, B, C, M, N, K, trans_a, trans_b, &e, NULL, config,
                                  ctx->precision == FFNN_PRECISION_BF16);
    const ffnn_gemm_plan p = ffnn_cuda_gemm_plan(ctx, M, N, K, config, 0);
    const int bk = ffnn_gemm_config_bk(p.config);
    if (bk == 0)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "cuda gemm: unknown config %d", config);
    /* split: the chunks' partial sums to the workspace, then the reduction + epilogue */
    float *Cs = p.splits > 1 ? ctx->split_ws : C;
    const ffnn_gemm_epilogue es = p.splits > 1 ? gemm_split_epilogue(ctx, e, M, N, p.splits) : e;
    const int ks = (p.k_chunk + bk - 1) / bk; /* k tiles per chunk */
    const int ta = trans_a, tb = trans_b, sp = p.splits;
    ffnn_status st;
    switch (p.config) {
    case FFNN_GEMM_128:
        st = gemm_launch<128, 128, 8, 8, 8>(ctx, A, B, Cs, M, N, K, ta, tb, es, sp, ks);
        break;
    case FFNN_GEMM_64:
        st = gemm_launch<64, 64, 16, 4, 4>(ctx, A, B, Cs, M, N, K, ta, tb, es, sp, ks);
        break;
    case FFNN_GEMM_32:
        st = gemm_launch<32, 32, 32, 2, 2>(ctx, A, B, Cs, M, N, K, ta, tb, es, sp, ks);
        break;
    case FFNN_GEMM_16:
        st = gemm_launch<16, 16, 64, 1, 1>(ctx, A, B, Cs, M, N, K, ta, tb, es, sp, ks);
        break;
    case FFNN_GEMM_TF32_128:
        st = gemm_tf32_launch<128, 128>(ctx, A, B, Cs, M, N, K, ta, tb, es, sp, ks);
        break;
    case FFNN_GEMM_TF32_64:
        st = gemm_tf32_launch<64, 64>(ctx, A, B, Cs, M, N, K, ta, tb, es, sp, ks);
        break;
    default:
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "cuda gemm: unknown config %d", config);
    }
    if (st == FFNN_OK && p.splits > 1) st = ffnn_cuda_gemm_split_reduce(ctx, C, M, N, p.splits, e);
    return st;
}

/* gemm.cuh ffnn_cuda_gemm_models_config */
extern "C" int ffnn_cuda_gemm_models_config(const ffnn_cuda_ctx *ctx, int M, int N, int count,
                                            const int *order, int n)
{
    const long long sms = ctx->sm_count > 0 ? ctx->sm_count : 1, area = (long long)M * N;
    int best = order[n - 1];
    long long best_pad = -1;
    for (int i = 0; i < n; i++) {
        const long long bm = ffnn_gemm_config_bm(order[i]), bn = ffnn_gemm_config_bn(order[i]);
        const long long tiles = ((M + bm - 1) / bm) * ((N + bn - 1) / bn);
        const long long pad = tiles * bm * bn;
        if (i < n - 1 && tiles * count >= 2 * sms && 2 * pad <= 3 * area)
            return order[i];
        if (best_pad < 0 || pad < best_pad)
            best = order[i], best_pad = pad;
    }
    return best;
}

extern "C" ffnn_status ffnn_cuda_gemm_models(ffnn_cuda_ctx *ctx, const float *A, const float *B,
                                             float *C, int M, int N, int K, int trans_a,
                                             int trans_b, const ffnn_gemm_epilogue *ep,
                                             const ffnn_gemm_models *z, int config)
{
    FFNN_CUDA_GUARD(ctx, "gemm_models");
    if (z == NULL || z->count < 1 || z->count > (int)FFNN_CUDA_MAX_GRID_YZ)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "cuda gemm_models: a model count in "
                         "1..%u is needed (%d)", (unsigned)FFNN_CUDA_MAX_GRID_YZ,
                         z ? z->count : 0);
    if (M < 1 || N < 1 || K < 1 || (size_t)M > FFNN_CUDA_MAX_DIM ||
        (size_t)N > FFNN_CUDA_MAX_DIM || (size_t)K > FFNN_CUDA_MAX_DIM)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda gemm_models: M=%d N=%d K=%d: each must be in 1..%zu", M, N, K,
                         (size_t)FFNN_CUDA_MAX_DIM);
    if (A == NULL || B == NULL || C == NULL)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda gemm_models: A, B and C must not be NULL");
    if (ctx->precision == FFNN_PRECISION_TF32 || ctx->precision == FFNN_PRECISION_BF16)
        return ffnn_cuda_gemm_mma(ctx, A, B, C, M, N, K, trans_a, trans_b, ep, z, config,
                                  ctx->precision == FFNN_PRECISION_BF16);
    if (ctx->precision != FFNN_PRECISION_FP32)
        return ffnn_fail(FFNN_ERR_UNSUPPORTED, "cuda gemm_models: fp32, tf32 or bf16 (precision "
                         "%s)", ffnn_precision_name(ctx->precision));
    static const int order[] = {FFNN_GEMM_128, FFNN_GEMM_64, FFNN_GEMM_32, FFNN_GEMM_16};
    ffnn_gemm_plan p;
    p.config = config == FFNN_GEMM_AUTO
                   ? ffnn_cuda_gemm_models_config(ctx, M, N, z->count, order, 4)
                   : config;
    const int bk = ffnn_gemm_config_bk(p.config);
    if (bk == 0)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "cuda gemm_models: unknown config %d",
                         config);
    ffnn_gemm_epilogue e;
    if (ep != NULL)
        e = *ep;
    else
        memset(&e, 0, sizeof e);
    const int ks = (K + bk - 1) / bk, n = z->count, ta = trans_a, tb = trans_b;
    switch (p.config) { /* grid z: the models (gemm_shape_of), K whole */
    case FFNN_GEMM_128:
        return gemm_launch<128, 128, 8, 8, 8, true>(ctx, A, B, C, M, N, K, ta, tb, e, n, ks, z);
    case FFNN_GEMM_64:
        return gemm_launch<64, 64, 16, 4, 4, true>(ctx, A, B, C, M, N, K, ta, tb, e, n, ks, z);
    case FFNN_GEMM_32:
        return gemm_launch<32, 32, 32, 2, 2, true>(ctx, A, B, C, M, N, K, ta, tb, e, n, ks, z);
    case FFNN_GEMM_16:
        return gemm_launch<16, 16, 64, 1, 1, true>(ctx, A, B, C, M, N, K, ta, tb, e, n, ks, z);
    default:
        return ffnn_fail(FFNN_ERR_UNSUPPORTED, "cuda gemm_models: config %s has no model axis",
                         ffnn_cuda_gemm_config_name(p.config));
    }
}
