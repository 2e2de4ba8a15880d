/* dense.c - dense (fully connected) layer, forward and backward, CPU reference. */
#include <string.h>

#include "cpu_ops.h"

/* z[b,o] = sum_k x[b,k] W[o,k] + b[o] */
void ffnn_cpu_dense_forward(const float *x, const float *W, const float *b, float *z,
                            size_t batch, size_t in, size_t out)
{
    for (size_t n = 0; n < batch; n++) {
        const float *xn = x + n * in; /* [in] */
        for (size_t o = 0; o < out; o++) {
            const float *wo = W + o * in; /* [in] */
            float sum = 0.0f;
            for (size_t k = 0; k < in; k++)
                sum += xn[k] * wo[k];
            z[n * out + o] = sum + (b ? b[o] : 0.0f);
        }
    }
}

/* dW[o,k] = sum_b dz[b,o] x[b,k];  db[o] = sum_b dz[b,o];  dx[b,k] = sum_o dz[b,o] W[o,k] */
void ffnn_cpu_dense_backward(const float *x, const float *W, const float *dz, float *dx,
                             float *dW, float *db, size_t batch, size_t in, size_t out)
{
    memset(dW, 0, out * in * sizeof *dW);
    for (size_t n = 0; n < batch; n++) {
        const float *xn = x + n * in;   /* [in]  */
        const float *dzn = dz + n * out; /* [out] */
        for (size_t o = 0; o < out; o++) {
            float g = dzn[o];
            float *dwo = dW + o * in;   /* [in] */
            for (size_t k = 0; k < in; k++)
                dwo[k] += g * xn[k];
        }
    }
    if (db) {
        for (size_t o = 0; o < out; o++) {
            float sum = 0.0f;
            for (size_t n = 0; n < batch; n++)
                sum += dz[n * out + o];
            db[o] = sum;
        }
    }
    if (dx) {
        memset(dx, 0, batch * in * sizeof *dx);
        for (size_t n = 0; n < batch; n++) {
            float *dxn = dx + n * in;        /* [in]  */
            const float *dzn = dz + n * out; /* [out] */
            for (size_t o = 0; o < out; o++) {
                float g = dzn[o];
                const float *wo = W + o * in; /* [in] */
                for (size_t k = 0; k < in; k++)
                    dxn[k] += g * wo[k];
            }
        }
    }
}
