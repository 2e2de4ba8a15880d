/* local1d_vec.cuh - the local1d forward's kernels for R <= L1D_VEC_RMAX (local1d.cu):
 * a group of four outputs per thread with wide loads (local1d_forward_global_vec,
 * local1d_forward_shared_vec) and their launch dependencies. Included by local1d_launch.cuh
 * only, after its sizes (L1D_THREADS) and walk macros. */
#ifndef FFNN_CUDA_LOCAL1D_VEC_CUH
#define FFNN_CUDA_LOCAL1D_VEC_CUH

/* For R <= L1D_VEC_RMAX both variants give each thread a group of L1D_G = 4
 * consecutive outputs m = 4g .. 4g+3, so that it issues a few wide loads instead of
 * many scalar ones: the group's W rows are 4R consecutive floats starting at byte
 * 16gR (16-byte aligned whenever W is), its biases and outputs one float4 each,
 * its inputs x[4g-pad .. 4g+2+R-pad] one float4 plus a tail. A pointer's
 * alignment (16, 8 or 4 bytes) is the same for every group of a row, so the width
 * of each load is chosen once per row, not per element. Groups at the ends of the
 * row (the last, partial group; with 'same' padding the groups whose window leaves
 * [0, N)) take the scalar path, which is the one-output-per-thread code.
 *
 * Launch dependencies: the kernels load the group's W and bias, then wait for the
 * previous kernel on the stream (griddepcontrol.wait, sm_90) before they read x or
 * write z, and let the next kernel launch early (griddepcontrol.launch_dependents)
 * - both no-ops unless the launch asks for programmatic serialization, which only
 * the lab's ffnn_lab_local1d_forward_stream does (lab/local1d_stream.h states
 * what it requires). */
#define L1D_VEC_RMAX 8
#define L1D_G 4

static __device__ __forceinline__ void l1d_dep_wait(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

static __device__ __forceinline__ void l1d_dep_launch(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/* Alignment of an address: 16, 8 or 4 (floats are always 4-byte aligned). */
static __device__ __forceinline__ int l1d_align(uintptr_t a)
{
    return (a & 15u) == 0 ? 16 : (a & 7u) == 0 ? 8 : 4;
}

/* v[0..n) = p[0..n), p aligned to a bytes: float4s, float2s or floats; every
 * index a compile-time constant, so v stays in registers. */
template <int n>
static __device__ __forceinline__ void l1d_load(float *v, const float *__restrict__ p, int a)
{
    if (a == 16) {
#pragma unroll
        for (int i = 0; i < n / 4; ++i) {
            const float4 q = reinterpret_cast<const float4 *>(p)[i];
            v[4 * i] = q.x, v[4 * i + 1] = q.y, v[4 * i + 2] = q.z, v[4 * i + 3] = q.w;
        }
        if (n % 4 >= 2) {
            const float2 q = reinterpret_cast<const float2 *>(p + 4 * (n / 4))[0];
            v[4 * (n / 4)] = q.x, v[4 * (n / 4) + 1] = q.y;
        }
        if (n % 2 == 1) v[n - 1] = p[n - 1];
    } else if (a == 8) {
#pragma unroll
        for (int i = 0; i < n / 2; ++i) {
            const float2 q = reinterpret_cast<const float2 *>(p)[i];
            v[2 * i] = q.x, v[2 * i + 1] = q.y;
        }
        if (n % 2 == 1) v[n - 1] = p[n - 1];
    } else {
#pragma unroll
        for (int i = 0; i < n; ++i) v[i] = p[i];
    }
}

/* p[0..4) = v[0..4), p aligned to a bytes. */
static __device__ __forceinline__ void l1d_store4(float *__restrict__ p, const float *v, int a)
{
    if (a == 16) {
        reinterpret_cast<float4 *>(p)[0] = make_float4(v[0], v[1], v[2], v[3]);
    } else if (a == 8) {
        reinterpret_cast<float2 *>(p)[0] = make_float2(v[0], v[1]);
        reinterpret_cast<float2 *>(p)[1] = make_float2(v[2], v[3]);
    } else {
        p[0] = v[0], p[1] = v[1], p[2] = v[2], p[3] = v[3];
    }
}

/* The group's 4 outputs from its weights w [4][R], biases b [4] (has_bias) and
 * inputs xv [R+3]: the reference's order (r ascending, fmaf, then bias, then act). */
template <int R>
static __device__ __forceinline__ void l1d_group(float *out, const float *w, const float *b,
                                                 const float *xv, bool has_bias,
                                                 ffnn_activation act)
{
#pragma unroll
    for (int j = 0; j < L1D_G; ++j) {
        float acc = 0.0f;
#pragma unroll
        for (int r = 0; r < R; ++r) acc = fmaf(w[j * R + r], xv[j + r], acc);
        if (has_bias) acc += b[j];
        out[j] = ffnn_dev_act_forward_basic(act, acc);
    }
}

/* global, R <= 8: thread k of the grid takes the groups k, k + S, ..., S the grid's
 * threads. Shapes as local1d_forward_global. */
template <int R>
static __global__ void __launch_bounds__(L1D_THREADS)
    local1d_forward_global_vec(const float *__restrict__ x, const float *__restrict__ W,
                               const float *__restrict__ bias, float *__restrict__ z,
                               size_t batch, size_t N, size_t M, int pad, ffnn_activation act)
{
    l1d_dep_launch();
    const size_t groups = (M + L1D_G - 1) / L1D_G;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    const bool has_bias = bias != NULL;
    const int aw = l1d_align((uintptr_t)W), ab = has_bias ? l1d_align((uintptr_t)bias) : 4;
    const size_t P = (size_t)pad;
    for (size_t row = blockIdx.y; row < batch; row += gridDim.y) {
        const float *xb = x + row * N; /* [N] */
        float *zb = z + row * M;       /* [M] */
        const int ax = l1d_align((uintptr_t)xb - 4u * P), az = l1d_align((uintptr_t)zb);
        for (size_t g = (size_t)blockIdx.x * blockDim.x + threadIdx.x; g < groups;
             g += stride) {
            const size_t m = g * L1D_G;
            /* all 4 outputs exist and their window x[m-pad .. m+2+R-pad] is in [0, N) */
            const bool full = m + L1D_G <= M && m >= P && m + L1D_G + R - 1 - P <= N;
            if (full) {
                float w[L1D_G * R], b[L1D_G], xv[R + L1D_G - 1], out[L1D_G];
                l1d_load<L1D_G * R>(w, W + m * R, aw);
                if (has_bias) l1d_load<L1D_G>(b, bias + m, ab);
                l1d_dep_wait(); /* x (the previous layer's output) and z are ours now */
                l1d_load<R + L1D_G - 1>(xv, xb + (m - P), ax);
                l1d_group<R>(out, w, b, xv, has_bias, act);
                l1d_store4(zb + m, out, az);
            } else { /* the scalar path, as local1d_forward_global */
                l1d_dep_wait();
                for (size_t k = m; k < l1d_min(M, m + L1D_G); ++k) {
                    float acc = 0.0f;
#pragma unroll
                    for (int r = 0; r < R; ++r) {
                        const size_t n = k + (size_t)r - P; /* wraps below 0: then >= N */
                        if (n < N) acc = fmaf(W[k * R + r], xb[n], acc);
                    }
                    if (has_bias) acc += bias[k];
                    zb[k] = ffnn_dev_act_forward_basic(act, acc);
                }
            }
        }
    }
}

/* shared, R <= 8: a block per tile of TW = 4 T outputs (T = L1D_THREADS threads,
 * grid.x strides over tiles, grid.y over rows); thread t takes the group
 * m0 + 4t .. m0 + 4t + 3. The tile's inputs with their halo,
 * x[m0-pad .. m0+TW-1+R-1-pad] (zero outside [0, N)), are staged in shared memory
 * with float4 loads; W has no reuse between outputs and is read straight from
 * global memory. Two staging buffers alternate between iterations, so one barrier
 * per tile suffices (an iteration's buffer is rewritten two iterations later, after
 * every thread has passed the barrier in between). Shapes as local1d_forward_global. */
#define L1D_TW (L1D_G * L1D_THREADS)
#define L1D_XS (L1D_TW + L1D_VEC_RMAX) /* floats per staging buffer: TW + R - 1, x4 */

template <int R>
static __global__ void __launch_bounds__(L1D_THREADS)
    local1d_forward_shared_vec(const float *__restrict__ x, const float *__restrict__ W,
                               const float *__restrict__ bias, float *__restrict__ z,
                               size_t batch, size_t N, size_t M, int pad, ffnn_activation act)
{
    __shared__ __align__(16) float x_s[2][L1D_XS];
    l1d_dep_launch();
    const int tid = (int)threadIdx.x;
    const size_t tiles = (M + L1D_TW - 1) / L1D_TW;
    const bool has_bias = bias != NULL;
    const int aw = l1d_align((uintptr_t)W), ab = has_bias ? l1d_align((uintptr_t)bias) : 4;
    const size_t P = (size_t)pad;
    int buf = 0;
    for (size_t row = blockIdx.y; row < batch; row += gridDim.y) {
        const float *xb = x + row * N; /* [N] */
        float *zb = z + row * M;       /* [M] */
        const int ax = l1d_align((uintptr_t)xb - 4u * P), az = l1d_align((uintptr_t)zb);
        for (size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x, buf ^= 1) {
            const size_t m0 = tile * L1D_TW, m = m0 + (size_t)L1D_G * tid;
            const bool full = m + L1D_G <= M;
            float w[L1D_G * R], b[L1D_G];
            if (full) {
                l1d_load<L1D_G * R>(w, W + m * R, aw);
                if (has_bias) l1d_load<L1D_G>(b, bias + m, ab);
            }
            l1d_dep_wait();
            /* stage x_s[k] = x[m0 - pad + k], k < TW + R - 1: thread t the 4 values
             * k = 4t .. 4t+3, threads t < R - 1 the halo k = TW + t */
            float *xs = x_s[buf];
            {
                const size_t n = m - P; /* x index of k = 4t; wraps below 0 */
                float v[L1D_G];
                if (ax == 16 && m >= P && n + L1D_G <= N) {
                    const float4 q = *reinterpret_cast<const float4 *>(xb + n);
                    v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
                } else {
#pragma unroll
                    for (int j = 0; j < L1D_G; ++j)
                        v[j] = n + (size_t)j < N ? xb[n + (size_t)j] : 0.0f;
                }
                *reinterpret_cast<float4 *>(xs + L1D_G * tid) = make_float4(v[0], v[1], v[2], v[3]);
                if (tid < R - 1) {
                    const size_t nh = m0 + L1D_TW + (size_t)tid - P;
                    xs[L1D_TW + tid] = nh < N ? xb[nh] : 0.0f;
                }
            }
            __syncthreads();
            const float *xt = xs + L1D_G * tid; /* this group's window, 16-byte aligned */
            if (full) {
                float xv[R + L1D_G - 1], out[L1D_G];
                l1d_load<R + L1D_G - 1>(xv, xt, 16);
                l1d_group<R>(out, w, b, xv, has_bias, act);
                l1d_store4(zb + m, out, az);
            } else {
                for (int j = 0; j < L1D_G && m + (size_t)j < M; ++j) {
                    float acc = 0.0f;
#pragma unroll
                    for (int r = 0; r < R; ++r) acc = fmaf(W[(m + j) * R + r], xt[j + r], acc);
                    if (has_bias) acc += bias[m + j];
                    zb[m + j] = ffnn_dev_act_forward_basic(act, acc);
                }
            }
        }
    }
}

#endif
