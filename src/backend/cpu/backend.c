/* backend.c - the cpu backend table: host memory and the reference ops. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/error.h"
#include "cpu_math.h"
#include "cpu_ops.h"

static ffnn_status cpu_create(const ffnn_backend_options *options, void **ctx)
{
    (void)options; /* one kind of kernel, single-threaded: the reference */
    *ctx = NULL;
    return FFNN_OK;
}

static void cpu_destroy(void *ctx) { (void)ctx; }

static int cpu_threads(const void *ctx)
{
    (void)ctx;
    return 1;
}

static ffnn_status cpu_alloc(void *ctx, size_t bytes, void **ptr)
{
    (void)ctx;
    *ptr = malloc(bytes ? bytes : 1);
    if (!*ptr)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "cpu backend: malloc of %zu bytes failed", bytes);
    return FFNN_OK;
}

void ffnn_cpu_host_release(void *ctx, void *ptr)
{
    (void)ctx;
    free(ptr);
}

ffnn_status ffnn_cpu_host_copy(void *ctx, void *dst, const void *src, size_t bytes)
{
    (void)ctx;
    if (bytes)
        memcpy(dst, src, bytes);
    return FFNN_OK;
}

ffnn_status ffnn_cpu_host_synchronize(void *ctx)
{
    (void)ctx;
    return FFNN_OK;
}

static ffnn_status cpu_gather(void *ctx, const ffnn_gather_source *src, const int32_t *index,
                              size_t batch, float *x, int32_t *y, float *t)
{
    (void)ctx;
    if (!src || (!src->images == !src->values) || (src->labels && !y) ||
        (src->targets && !t))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cpu gather: expected one of images/values, and y (t) with labels "
                         "(targets)");
    ffnn_cpu_gather(src, index, batch, x, y, t);
    return FFNN_OK;
}

static ffnn_status cpu_dense_forward(void *ctx, const float *x, const float *W,
                                     const float *b, float *z, size_t batch, size_t in,
                                     size_t out)
{
    (void)ctx;
    ffnn_cpu_dense_forward(x, W, b, z, batch, in, out);
    return FFNN_OK;
}

static ffnn_status cpu_dense_backward(void *ctx, const float *x, const float *W,
                                      const float *dz, float *dx, float *dW, float *db,
                                      size_t batch, size_t in, size_t out)
{
    (void)ctx;
    ffnn_cpu_dense_backward(x, W, dz, dx, dW, db, batch, in, out);
    return FFNN_OK;
}

static ffnn_status cpu_local1d_forward(void *ctx, const float *x, const float *W,
                                       const float *b, float *z, size_t batch, size_t N,
                                       size_t R, ffnn_local1d_padding padding,
                                       ffnn_activation act)
{
    (void)ctx;
    ffnn_status st = ffnn_local1d_check_outputs("cpu local1d_forward", N, R, padding);
    if (st == FFNN_OK)
        ffnn_cpu_local1d_forward(x, W, b, z, batch, N, R, padding, act);
    return st;
}

static ffnn_status cpu_local1d_backward(void *ctx, const float *x, const float *W,
                                        const float *dz, float *dx, float *dW, float *db,
                                        size_t batch, size_t N, size_t R,
                                        ffnn_local1d_padding padding)
{
    (void)ctx;
    ffnn_status st = ffnn_local1d_check_outputs("cpu local1d_backward", N, R, padding);
    if (st == FFNN_OK)
        ffnn_cpu_local1d_backward(x, W, dz, dx, dW, db, batch, N, R, padding);
    return st;
}

static ffnn_status cpu_embedding_forward(void *ctx, const float *x, const float *W, float *a,
                                         size_t batch, const ffnn_embedding_spec *spec)
{
    (void)ctx;
    ffnn_cpu_embedding_forward(x, W, a, batch, spec);
    return FFNN_OK;
}

static ffnn_status cpu_embedding_backward(void *ctx, const float *x, const float *dz,
                                          float *dW, size_t batch,
                                          const ffnn_embedding_spec *spec)
{
    (void)ctx;
    ffnn_cpu_embedding_backward(x, dz, dW, batch, spec);
    return FFNN_OK;
}

static ffnn_status cpu_activation_forward(void *ctx, ffnn_activation act, float param,
                                          const float *z, float *a, size_t n)
{
    (void)ctx;
    ffnn_cpu_activation_forward(act, param, z, a, n);
    return FFNN_OK;
}

static ffnn_status cpu_activation_backward(void *ctx, ffnn_activation act, float param,
                                           const float *saved, const float *da, float *dz,
                                           size_t n)
{
    (void)ctx;
    ffnn_cpu_activation_backward(act, param, saved, da, dz, n);
    return FFNN_OK;
}

static ffnn_status cpu_loss(void *ctx, ffnn_loss loss, const float *out, const int32_t *y,
                            const float *targets, size_t batch, size_t width, float *dout,
                            float *row_loss, uint8_t *row_correct)
{
    (void)ctx;
    if (targets && loss == FFNN_LOSS_SOFTMAX_CE)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cpu loss: softmax_ce takes class labels, not float targets");
    if (!targets && !y)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "cpu loss: neither labels nor targets");
    ffnn_cpu_loss(loss, out, y, targets, batch, width, dout, row_loss, row_correct);
    return FFNN_OK;
}

static ffnn_status cpu_optimizer_update(void *ctx, const ffnn_optimizer_step *step,
                                        float *params, const float *grads, float *state,
                                        size_t n)
{
    (void)ctx;
    if ((int)step->kind < FFNN_OPT_SGD || (int)step->kind > FFNN_OPT_ADAMW)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cpu optimizer_update: unknown optimizer %d", (int)step->kind);
    ffnn_cpu_optimizer_update(step, params, grads, state, n);
    return FFNN_OK;
}

static ffnn_status cpu_grad_clip(void *ctx, float *grads, size_t n, float max_norm,
                                 float max_value, float *norm_out)
{
    (void)ctx;
    if (max_value > 0.0f)
        ffnn_cpu_grad_clip_value(grads, 0, n, max_value);
    if (max_norm > 0.0f) {
        const float norm = (float)sqrt(ffnn_cpu_grad_clip_sum_squares(grads, 0, n));
        ffnn_cpu_grad_clip_scale(grads, 0, n, ffnn_clip_coef(max_norm, norm));
        if (norm_out)
            *norm_out = norm;
    }
    return FFNN_OK;
}

static ffnn_status cpu_dropout(void *ctx, const float *in, float *out, size_t n, uint64_t key,
                               uint32_t threshold, float scale)
{
    (void)ctx;
    ffnn_cpu_dropout(in, out, 0, n, key, threshold, scale);
    return FFNN_OK;
}

static ffnn_status cpu_ema_update(void *ctx, float *ema, const float *params, size_t n,
                                  float decay, float one_minus_decay)
{
    (void)ctx;
    ffnn_cpu_ema_update(ema, params, 0, n, decay, one_minus_decay);
    return FFNN_OK;
}

static ffnn_status cpu_loss_weights(void *ctx, const float *weights, const int32_t *index,
                                   size_t batch, size_t width, float *dout)
{
    (void)ctx;
    ffnn_cpu_loss_weights(weights, index, batch, width, dout);
    return FFNN_OK;
}

static const ffnn_ops_weights cpu_weights = {
    .loss_weights = cpu_loss_weights,
};

const ffnn_backend_ops ffnn_cpu_backend = {
    .name = "cpu",
    .caps = 0,
    .create = cpu_create,
    .destroy = cpu_destroy,
    .threads = cpu_threads,
    .alloc = cpu_alloc,
    .release = ffnn_cpu_host_release,
    .upload = ffnn_cpu_host_copy,
    .download = ffnn_cpu_host_copy,
    .synchronize = ffnn_cpu_host_synchronize,
    .gather = cpu_gather,
    .dense_forward = cpu_dense_forward,
    .dense_backward = cpu_dense_backward,
    .local1d_forward = cpu_local1d_forward,
    .local1d_backward = cpu_local1d_backward,
    .embedding_forward = cpu_embedding_forward,
    .embedding_backward = cpu_embedding_backward,
    .activation_forward = cpu_activation_forward,
    .activation_backward = cpu_activation_backward,
    .loss = cpu_loss,
    .optimizer_update = cpu_optimizer_update,
    .grad_clip = cpu_grad_clip,
    .dropout = cpu_dropout,
    .ema_update = cpu_ema_update,
    .weights = &cpu_weights,
};
