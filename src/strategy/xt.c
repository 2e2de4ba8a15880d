/* xt.c - x prepared for the weight gradient (step.h ffnn_step_xt_create): layer
 * 0's input from the gather, the hidden layers' beside the forward. */
#include <stdlib.h>

#include "core/error.h"
#include "strategy/step_phases.h"
#include "strategy/xt.h"

/* Layer i's input prepared for its weight gradient (backend.h prepare_xt: x^T
 * [in, batch], or tf32x3's split x^T) that the training step makes where the
 * layer's weight gradient takes it at this batch (backend.h dense_backward_wants_xt;
 * asked per step: a short last batch may not): layer 0's r->ext.xt->x, written by the
 * step's gather, a hidden layer's r->ext.xt->act[i - 1], written beside the forward; else
 * NULL. Only the step's own gather and forward write them (queue_step): a caller of
 * ffnn_step_forward / _backward gets none. */
float *ffnn_xt_for_layer(const ffnn_run *r, int i, size_t batch)
{
    const ffnn_xt *X = r->ext.xt;
    if (X == NULL)
        return NULL;
    float *xt = i == 0 ? X->x : X->act ? X->act[i - 1] : NULL;
    const ffnn_layer *l = &r->model->layers[i];
    return xt && (size_t)r->ops->xt->dense_backward_wants_xt(r->ctx, batch, l->in, l->out) ==
                     X->parts
               ? xt
               : NULL;
}

ffnn_status ffnn_step_xt_create(ffnn_run *r)
{
    const ffnn_layer *l0 = &r->model->layers[0];
    const size_t B = r->cfg->batch_size;
    r->ext.xt = NULL;
    if (!r->ops->xt || !r->plan.fused || r->ext.mixed ||
        l0->kind != FFNN_LAYER_DENSE || l0->has_dropout)
        return FFNN_OK;
    const int parts = r->ops->xt->dense_backward_wants_xt(r->ctx, B, l0->in, l0->out);
    if (parts < 1)
        return FFNN_OK;
    ffnn_xt *X = calloc(1, sizeof *X);
    if (!X)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
    X->parts = (size_t)parts;
    void *p = NULL;
    ffnn_status st = r->ops->alloc(r->ctx, X->parts * B * l0->in * sizeof(float), &p);
    if (st != FFNN_OK) {
        free(X);
        return st;
    }
    X->x = (float *)p;
    r->ext.xt = X;
    /* the hidden layers' inputs, transposed beside the forward (not the head's
     * layer: the head op reads h as it is) */
    const ffnn_model *m = r->model;
    const int last = m->layer_count - 1 - (r->ext.head != NULL);
    for (int i = 1; i <= last && ffnn_step_has_side(r); i++) {
        const ffnn_layer *l = &m->layers[i];
        if (l->kind != FFNN_LAYER_DENSE || m->layers[i - 1].has_dropout ||
            (size_t)r->ops->xt->dense_backward_wants_xt(r->ctx, B, l->in, l->out) != X->parts)
            continue;
        if (!X->act && !(X->act = calloc((size_t)m->layer_count, sizeof *X->act))) {
            ffnn_step_xt_free(r);
            return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
        }
        p = NULL;
        if ((st = r->ops->alloc(r->ctx, X->parts * B * l->in * sizeof(float), &p)) != FFNN_OK) {
            ffnn_step_xt_free(r);
            return st;
        }
        X->act[i - 1] = (float *)p;
    }
    return FFNN_OK;
}

void ffnn_step_xt_free(ffnn_run *r)
{
    ffnn_xt *X = r->ext.xt;
    if (X == NULL)
        return;
    r->ops->release(r->ctx, X->x);
    for (int i = 0; X->act && i < r->model->layer_count; i++)
        if (X->act[i] != NULL)
            r->ops->release(r->ctx, X->act[i]);
    free(X->act);
    free(X);
    r->ext.xt = NULL;
}
