/* mixed.c - the buffers of the mixed-precision pipeline (step.h ffnn_mixed): made
 * by the cublaslt strategy for --precision bf16, the bf16 shadow of the parameters
 * kept equal to bf16(params). The steps that use them are step_forward.c's
 * forward_bf16, step_backward.c's backward_bf16 and step_update.c's update. */
#include <stdlib.h>

#include "core/error.h"
#include "strategy/mixed.h"
#include "strategy/step_phases.h"

ffnn_status ffnn_mixed_create(ffnn_run *r)
{
    const ffnn_backend_ops *o = r->ops;
    const ffnn_model *m = r->model;
    if (!o->bf16)
        return ffnn_fail(FFNN_ERR_UNSUPPORTED, "precision bf16: the %s backend has no "
                         "mixed-precision ops", o->name);
    ffnn_mixed *mx = calloc(1, sizeof *mx);
    if (!mx || !(mx->act16 = calloc((size_t)m->layer_count, sizeof *mx->act16))) {
        free(mx);
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
    }
    r->ext.mixed = mx;
    mx->stale = 1;
    const size_t cap = r->capacity, h = sizeof(uint16_t);
    /* the widest gradient: a layer's width, or the loss's padded rows */
    size_t widest = ffnn_bf16_ld(m->layers[m->layer_count - 1].out);
    for (int i = 0; i < m->layer_count; i++)
        if (m->layers[i].out > widest)
            widest = m->layers[i].out;
    ffnn_status st = o->alloc(r->ctx, m->parameter_count * h, (void **)&mx->params16);
    if (st == FFNN_OK)
        st = o->alloc(r->ctx, cap * m->input_size * h, (void **)&mx->x16);
    for (int i = 0; i < m->layer_count - 1 && st == FFNN_OK; i++)
        st = o->alloc(r->ctx, cap * m->layers[i].out * h, (void **)&mx->act16[i]);
    for (int k = 0; k < 2 && st == FFNN_OK; k++)
        st = o->alloc(r->ctx, cap * widest * h, (void **)&mx->grad16[k]);
    if (st != FFNN_OK)
        ffnn_mixed_free(r);
    return st;
}

void ffnn_mixed_free(ffnn_run *r)
{
    ffnn_mixed *mx = r->ext.mixed;
    if (!mx)
        return;
    const ffnn_backend_ops *o = r->ops;
    o->release(r->ctx, mx->params16);
    o->release(r->ctx, mx->x16);
    for (int i = 0; i < r->model->layer_count; i++)
        o->release(r->ctx, mx->act16[i]);
    o->release(r->ctx, mx->grad16[0]);
    o->release(r->ctx, mx->grad16[1]);
    free(mx->act16);
    free(mx);
    r->ext.mixed = NULL;
}

void ffnn_run_params_changed(ffnn_run *r)
{
    if (r->ext.mixed)
        r->ext.mixed->stale = 1;
}

ffnn_status ffnn_mixed_sync(ffnn_run *r)
{
    ffnn_mixed *mx = r->ext.mixed;
    if (!mx || !mx->stale)
        return FFNN_OK;
    const size_t n = r->model->parameter_count;
    ffnn_status st = r->ops->bf16->to_bf16(r->ctx, r->params, mx->params16, 1, n, n);
    if (st == FFNN_OK)
        mx->stale = 0;
    return st;
}

/* 1 when step t runs the mixed-precision pipeline (step.h ffnn_mixed): training
 * steps with the bf16 buffers made (every layer dense and fused: per_op.c). */
int ffnn_mixed_step(const ffnn_run *r, uint64_t t)
{
    return r->ext.mixed != NULL && t > 0;
}
