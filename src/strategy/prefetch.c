/* prefetch.c - the second set of batch buffers of the graph runs (step.h
 * ffnn_batch_buffers, r->ext.spare): while step s runs, the next step's batch is
 * gathered into them on the backend's second CUDA stream (step.c ffnn_step_queue_run),
 * and the two sets trade places between the steps (double buffering). Measured:
 * the history of docs/RESULTS.md. */
#include <stdlib.h>

#include "core/error.h"
#include "strategy/mixed.h"
#include "strategy/prefetch.h"
#include "strategy/xt.h"

ffnn_status ffnn_prefetch_create(ffnn_run *r)
{
    const ffnn_backend_ops *o = r->ops;
    r->ext.spare = NULL;
    if (!o->side || r->comm != NULL)
        return FFNN_OK;
    const ffnn_model *m = r->model;
    const size_t rows = r->cfg->batch_size, in = m->input_size;
    const size_t out = m->layers[m->layer_count - 1].out;
    ffnn_batch_buffers *b = calloc(1, sizeof *b);
    if (!b)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
    r->ext.spare = b;
    ffnn_status st = o->alloc(r->ctx, rows * in * sizeof(float), (void **)&b->x);
    if (st == FFNN_OK)
        st = o->alloc(r->ctx, rows * sizeof(int32_t), (void **)&b->y);
    if (st == FFNN_OK)
        st = o->alloc(r->ctx, rows * out * sizeof(float), (void **)&b->tgt);
    if (st == FFNN_OK && r->ext.mixed)
        st = o->alloc(r->ctx, rows * in * sizeof(uint16_t), (void **)&b->x16);
    if (st == FFNN_OK && r->ext.xt)
        st = o->alloc(r->ctx, r->ext.xt->parts * rows * in * sizeof(float), (void **)&b->xt);
    if (st != FFNN_OK)
        ffnn_prefetch_free(r);
    return st;
}

void ffnn_prefetch_free(ffnn_run *r)
{
    ffnn_batch_buffers *b = r->ext.spare;
    if (!b)
        return;
    r->ops->release(r->ctx, b->x);
    r->ops->release(r->ctx, b->y);
    r->ops->release(r->ctx, b->tgt);
    r->ops->release(r->ctx, b->x16);
    r->ops->release(r->ctx, b->xt);
    free(b);
    r->ext.spare = NULL;
}

/* Trade r's batch buffers (x, y, tgt, the mixed x16, xt) with r->ext.spare's. */
void ffnn_prefetch_swap(ffnn_run *r)
{
    ffnn_batch_buffers *b = r->ext.spare;
    float *x = r->x, *tgt = r->tgt;
    int32_t *y = r->y;
    r->x = b->x, r->y = b->y, r->tgt = b->tgt;
    b->x = x, b->y = y, b->tgt = tgt;
    if (r->ext.mixed) {
        uint16_t *x16 = r->ext.mixed->x16;
        r->ext.mixed->x16 = b->x16;
        b->x16 = x16;
    }
    if (r->ext.xt && b->xt) {
        float *xt = r->ext.xt->x;
        r->ext.xt->x = b->xt;
        b->xt = xt;
    }
}
