/* mixed.h - the bf16 pipeline's buffers (r->ext.mixed), owned by mixed.c. */
#ifndef FFNN_STRATEGY_MIXED_H
#define FFNN_STRATEGY_MIXED_H

#include "strategy/step.h"

/* The mixed-precision pipeline (--precision bf16 on cublaslt: ffnn_mixed_create in
 * per_op.c when the backend has the bf16 ops and the net runs the fused dense ops),
 * as PyTorch's autocast but without a cast per matmul. Which tensor is kept in
 * which type, and why:
 *   fp32  params (master weights and biases), grads, opt_state: the update adds
 *         lr*g, far below a bf16 ulp of w; the logits act[L-1] and the loss's
 *         dL/dlogits grad_buf[0]: softmax and log-sum-exp need fp32; the bias
 *         inside the epilogues; dW and db (fp32 accumulation over the batch)
 *   bf16  params16: a shadow of params (same offsets), written by the optimizer
 *         update in the kernel that updates the fp32 value, and by ffnn_mixed_sync
 *         after params came from the host (start, checkpoint load); x16 (the
 *         batch, rounded once per step); act16[l] (hidden outputs, written by the
 *         forward matmul's epilogue: their consumers are the next matmul, the
 *         weight-gradient matmul and f' (relu: only the sign)); grad16 (dL/dz of
 *         each layer: the operand of its dW and dx matmuls; the dx matmul writes
 *         it in bf16, f' applied in place)
 * Evaluation (t == 0) runs the fp32 buffers and the bf16 conversions of the fused
 * ops: it reads params (or the EMA weights), whatever the shadow holds. */
struct ffnn_mixed {
    uint16_t *params16;   /* [parameter_count] bf16 shadow of params            */
    uint16_t *x16;        /* [capacity, input_size]                             */
    uint16_t **act16;     /* [layer_count] -> [capacity, layer.out]; NULL for the
                             last layer (its output stays fp32 in act[L-1])      */
    uint16_t *grad16[2];  /* each [capacity, the widest layer or ffnn_bf16_ld of the
                             output width]: the loss's dz has padded rows     */
    int stale;            /* 1: params16 is not bf16(params) yet                 */
};

/* The mixed-precision buffers of r (per_op.c's cublaslt prepare): allocated on
 * r's backend, params16 marked stale. FFNN_ERR_UNSUPPORTED when the backend has
 * no bf16 ops; allocation errors as the backend's alloc. */
ffnn_status ffnn_mixed_create(ffnn_run *r);
/* Release r->ext.mixed (NULL: nothing) and set it to NULL. */
void ffnn_mixed_free(ffnn_run *r);
/* params16 = bf16(params) when stale (queued; not while a graph is captured:
 * the strategies call it before a capture). */
ffnn_status ffnn_mixed_sync(ffnn_run *r);
/* 1 when step t runs the bf16 pipeline: a training step with the buffers made. */
int ffnn_mixed_step(const ffnn_run *r, uint64_t t);

#endif
