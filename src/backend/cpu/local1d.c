/* local1d.c - the 1-D locally connected layer (seed 002), forward and backward,
 * CPU reference; also ffnn_cpu_local1d_forward of core/local1d.h (the shape rules,
 * output size and padding, are in core/local1d.c).
 *
 * Every output m has its own R weights W[m, :] and its own bias b[m], and looks
 * at R consecutive inputs starting at m - pad (pad = 0 for 'valid', (R-1)/2 for
 * 'same'); an input index outside [0, N) reads as zero (its term is left out).
 *
 *   forward   z[b,m]  = sum_{r<R} W[m,r] x[b, m+r-pad]  (+ bias[m])
 *   backward  dW[m,r] = sum_b dz[b,m] x[b, m+r-pad]
 *             db[m]   = sum_b dz[b,m]
 *             dx[b,n] = sum_{r<R} dz[b, n+pad-r] W[n+pad-r, r]   (0 <= n+pad-r < M)
 *
 * Summation orders (the OpenMP kernels follow them, so they give these bits):
 * z over r ascending, then the bias; dW and db over b ascending; dx over r
 * ascending (a gather per input: no scatter, so each dx is written once). */
#include <string.h>

#include "core/activation.h"
#include "cpu_ops.h"

/* z[m] for m in [begin, end) of one row xb [N] -> zb [M]: over r ascending, then
 * the bias. */
void ffnn_cpu_local1d_forward_range(const float *xb, const float *W, const float *bias,
                                    float *zb, size_t N, size_t R, size_t pad, size_t begin,
                                    size_t end)
{
    for (size_t m = begin; m < end; m++) {
        const float *wm = W + m * R; /* [R] */
        float sum = 0.0f;
        for (size_t r = 0; r < R; r++) {
            const size_t n = m + r - pad; /* wraps around below 0: then >= N */
            if (n < N)
                sum += wm[r] * xb[n];
        }
        zb[m] = sum + (bias ? bias[m] : 0.0f);
    }
}

/* z = local1d(x) (+ bias), then a = act(z) in place (act with its default
 * parameter, core/activation.h). */
void ffnn_cpu_local1d_forward(const float *x, const float *W, const float *bias, float *z,
                              size_t batch, size_t N, size_t R, ffnn_local1d_padding padding,
                              ffnn_activation act)
{
    const size_t M = ffnn_local1d_output_size(N, R, padding);
    const size_t pad = ffnn_local1d_pad(R, padding);
    for (size_t b = 0; b < batch; b++) {
        float *zb = z + b * M; /* [M] */
        ffnn_cpu_local1d_forward_range(x + b * N, W, bias, zb, N, R, pad, 0, M);
        if (act != FFNN_ACT_IDENTITY)
            ffnn_cpu_activation_forward(act, ffnn_act_default_param(act), zb, zb, M);
    }
}

/* dW[m, :] = sum_b dz[b,m] x[b, m+r-pad] and db[m] = sum_b dz[b,m] (db may be NULL)
 * for m in [begin, end): over the batch in order. */
void ffnn_cpu_local1d_weight_grad_range(const float *x, const float *dz, float *dW, float *db,
                                        size_t batch, size_t N, size_t M, size_t R,
                                        size_t pad, size_t begin, size_t end)
{
    memset(dW + begin * R, 0, (end - begin) * R * sizeof *dW);
    for (size_t b = 0; b < batch; b++) {
        const float *xb = x + b * N;   /* [N] */
        const float *dzb = dz + b * M; /* [M] */
        for (size_t m = begin; m < end; m++) {
            float *dwm = dW + m * R; /* [R] */
            for (size_t r = 0; r < R; r++) {
                const size_t n = m + r - pad;
                if (n < N)
                    dwm[r] += dzb[m] * xb[n];
            }
        }
    }
    if (db) {
        for (size_t m = begin; m < end; m++) {
            float sum = 0.0f;
            for (size_t b = 0; b < batch; b++)
                sum += dz[b * M + m];
            db[m] = sum;
        }
    }
}

/* dx[b,n] = sum_r dz[b,m] W[m,r] over the outputs m = n+pad-r that read n, for n in
 * [begin, end) of one row dzb [M] -> dxb [N]: over r in order. */
void ffnn_cpu_local1d_input_grad_range(const float *dzb, const float *W, float *dxb, size_t M,
                                       size_t R, size_t pad, size_t begin, size_t end)
{
    for (size_t n = begin; n < end; n++) {
        float sum = 0.0f;
        for (size_t r = 0; r < R; r++) {
            const size_t m = n + pad - r; /* wraps around below 0: then >= M */
            if (m < M)
                sum += dzb[m] * W[m * R + r];
        }
        dxb[n] = sum;
    }
}

void ffnn_cpu_local1d_backward(const float *x, const float *W, const float *dz, float *dx,
                               float *dW, float *db, size_t batch, size_t N, size_t R,
                               ffnn_local1d_padding padding)
{
    const size_t M = ffnn_local1d_output_size(N, R, padding);
    const size_t pad = ffnn_local1d_pad(R, padding);
    ffnn_cpu_local1d_weight_grad_range(x, dz, dW, db, batch, N, M, R, pad, 0, M);
    if (dx)
        for (size_t b = 0; b < batch; b++)
            ffnn_cpu_local1d_input_grad_range(dz + b * M, W, dx + b * N, M, R, pad, 0, N);
}
