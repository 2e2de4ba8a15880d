/* cpu_ops.h - the CPU reference ops: plain, single-threaded, float32 C, written
 * for reading. Every other backend is checked against these. Shapes row-major.
 * Semantics are those of src/backend/backend.h, which wraps these in the cpu table. The
 * per-element formulas of the activations, the uint8 input and the optimizers are
 * cpu_math.h's (shared with the omp backend). */
#ifndef FFNN_CPU_OPS_H
#define FFNN_CPU_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "ffnn.h"

/* The host-memory entries of the cpu table (backend.c), the omp backend's too:
 * release frees a block of either backend's alloc (malloc, aligned_alloc), upload
 * and download copy bytes (none for 0), synchronize has nothing to wait for. */
void ffnn_cpu_host_release(void *ctx, void *ptr);
ffnn_status ffnn_cpu_host_copy(void *ctx, void *dst, const void *src, size_t bytes);
ffnn_status ffnn_cpu_host_synchronize(void *ctx);

/* z = x W^T (+ b).  x [batch, in], W [out, in], b [out] or NULL, z [batch, out] */
void ffnn_cpu_dense_forward(const float *x, const float *W, const float *b, float *z,
                            size_t batch, size_t in, size_t out);
/* dW = dz^T x [out, in]; db = sum_b dz [out] (if db); dx = dz W [batch, in] (if dx). */
void ffnn_cpu_dense_backward(const float *x, const float *W, const float *dz, float *dx,
                             float *dW, float *db, size_t batch, size_t in, size_t out);

/* 1-D locally connected layer (local1d.c; shapes in local1d/local1d.h). The
 * forward pass is the shared entry point ffnn_cpu_local1d_forward (local1d.h).
 * dW [M, R] (overwritten); db [M] (if db); dx [batch, N] (if dx). */
void ffnn_cpu_local1d_backward(const float *x, const float *W, const float *dz, float *dx,
                               float *dW, float *db, size_t batch, size_t N, size_t R,
                               ffnn_local1d_padding padding);
/* Its loops over a range of one pass (the omp backend runs them per chunk), pad =
 * ffnn_local1d_pad, M = ffnn_local1d_output_size: z[m] of one row xb [N] -> zb [M]
 * (no activation); dW[m, :] and db[m] (if db) over the whole batch; dx[n] of one row
 * dzb [M] -> dxb [N]; each for m (resp. n) in [begin, end). */
void ffnn_cpu_local1d_forward_range(const float *xb, const float *W, const float *bias,
                                    float *zb, size_t N, size_t R, size_t pad, size_t begin,
                                    size_t end);
void ffnn_cpu_local1d_weight_grad_range(const float *x, const float *dz, float *dW, float *db,
                                        size_t batch, size_t N, size_t M, size_t R,
                                        size_t pad, size_t begin, size_t end);
/* Embedding layer (embedding.c; formulas in core/embedding.h; the whole passes
 * are ffnn_cpu_embedding_forward / _backward there). The parts the omp backend
 * runs per thread: output rows [b0, b1) of a; and table j's column e of dW
 * (zeroed, then summed over the batch in order). */
void ffnn_cpu_embedding_forward_rows(const float *x, const float *W, float *a, size_t b0,
                                     size_t b1, const ffnn_embedding_spec *s);
void ffnn_cpu_embedding_backward_column(const float *x, const float *dz, float *dW,
                                        size_t batch, const ffnn_embedding_spec *s, size_t j,
                                        size_t e);
void ffnn_cpu_local1d_input_grad_range(const float *dzb, const float *W, float *dxb, size_t M,
                                       size_t R, size_t pad, size_t begin, size_t end);

/* a = f(z), n values (a may equal z); param: the activation's parameter
 * (core/activation.h: leaky_relu's slope, elu's alpha; unused by the others). */
void ffnn_cpu_activation_forward(ffnn_activation act, float param, const float *z, float *a,
                                 size_t n);
/* dz = da * f'(z), f' from the saved value: a = f(z), or z where
 * ffnn_act_grad_from_input(act) (dz may equal da). */
void ffnn_cpu_activation_backward(ffnn_activation act, float param, const float *saved,
                                  const float *da, float *dz, size_t n);

/* See backend.h `loss`. targets [batch, width] or NULL (then y [batch]); targets
 * must be NULL for softmax_ce (the cpu table refuses it). */
/* The same for rows [begin, end) of the batch only (the scale still uses the whole
 * batch): lets a parallel backend split the rows. */
void ffnn_cpu_loss_rows(ffnn_loss loss, const float *out, const int32_t *y,
                        const float *targets, size_t batch, size_t width, float *dout,
                        float *row_loss, uint8_t *row_correct, size_t begin, size_t end);
void ffnn_cpu_loss(ffnn_loss loss, const float *out, const int32_t *y, const float *targets,
                   size_t batch, size_t width, float *dout, float *row_loss,
                   uint8_t *row_correct);
/* See backend.h `loss_weights` (the cpu and omp backends share it: O(batch * width)). */
void ffnn_cpu_loss_weights(const float *weights, const int32_t *index, size_t batch,
                           size_t width, float *dout);

/* See backend.h `gather`: x[b, f] = images[index[b], f] / 255 or values[index[b], f];
 * y[b] = labels[index[b]] (if labels); t[b, j] = targets[index[b], j] (if targets). */
void ffnn_cpu_gather(const ffnn_gather_source *src, const int32_t *index, size_t batch,
                     float *x, int32_t *y, float *t);

/* The optimizers (backend.h optimizer_update, one function each).
 * params [n], grads [n]; buf [n]; m [n], v [n]. */
/* params[i] -= learning_rate * grads[i]. */
void ffnn_cpu_optimizer_update_sgd(float *params, const float *grads, size_t n,
                                   float learning_rate);
/* One step of any optimizer (ffnn_optimizer_step: kind, weight decay, scalars);
 * state [state_count * n] laid out as backend.h optimizer_update says (v at
 * state + (s->state_stride or n)); NULL for sgd. */
void ffnn_cpu_optimizer_update(const ffnn_optimizer_step *s, float *params, const float *grads,
                               float *state, size_t n);

/* The element ranges [begin, end) of clipping, EMA and dropout (the omp backend
 * runs the same functions on chunks; update.c, activation.c). */
/* sum of g[i]^2 in double, in order. */
double ffnn_cpu_grad_clip_sum_squares(const float *g, size_t begin, size_t end);
/* g = clamp(g, -max_value, max_value). */
void ffnn_cpu_grad_clip_value(float *g, size_t begin, size_t end, float max_value);
/* g *= coef. */
void ffnn_cpu_grad_clip_scale(float *g, size_t begin, size_t end, float coef);
/* ema = ema decay + (1 - decay) p. */
void ffnn_cpu_ema_update(float *ema, const float *p, size_t begin, size_t end, float decay,
                  float one_minus_decay);
/* out = keep(i) ? in * scale : 0 (core/dropout.h). */
void ffnn_cpu_dropout(const float *in, float *out, size_t begin, size_t end, uint64_t key,
                      uint32_t threshold, float scale);

#endif
