/* prefetch.h - the second set of batch buffers (r->ext.spare), owned by prefetch.c. */
#ifndef FFNN_STRATEGY_PREFETCH_H
#define FFNN_STRATEGY_PREFETCH_H

#include "strategy/step.h"

/* The buffers a training batch is gathered into (gather; gather_bf16 for a
 * mixed step: x16 instead of x). */
struct ffnn_batch_buffers {
    float *x;             /* [batch_size, input_size]                            */
    int32_t *y;           /* [batch_size] class labels                           */
    float *tgt;           /* [batch_size, output width] float targets            */
    uint16_t *x16;        /* [batch_size, input_size] bf16 (r->ext.mixed), else NULL */
    float *xt;            /* [xt parts * input_size * batch_size] x prepared for
                             layer 0's weight gradient (r->ext.xt: xt.h), else NULL */
};

/* r->ext.spare (prefetch.c): made when the backend has the second stream (backend.h
 * side_begin) and r has no communicator, batch_size rows (with r->ext.mixed also
 * x16, with r->ext.xt also xt); else left NULL. Errors as the backend's alloc
 * (nothing left allocated).
 * ffnn_prefetch_free releases it; ffnn_prefetch_swap trades r's batch buffers
 * (x, y, tgt, the mixed x16, xt) with the second set's. */
ffnn_status ffnn_prefetch_create(ffnn_run *r);
void ffnn_prefetch_free(ffnn_run *r);
void ffnn_prefetch_swap(ffnn_run *r);

#endif
