/* step_forward.c - the forward pass of the step (step.h, step_phases.h): the
 * plain ops, the fused dense ops, and the bf16 pipeline (ffnn_mixed). */
#include "core/error.h"
#include "strategy/mixed.h"
#include "strategy/step_phases.h"
#include "strategy/xt.h"

/* The forward pass in bf16 (ffnn_mixed): x16 = bf16(x) (unless gathered as bf16:
 * x16_gathered); each layer's matmul reads the bf16 shadow of its weights and
 * writes act16[i] (the last layer: the fp32 logits act[L-1]). */
static ffnn_status forward_bf16(ffnn_run *r, size_t batch, float **output, int x16_gathered,
                                int layers)
{
    const ffnn_model *m = r->model;
    ffnn_mixed *mx = r->ext.mixed;
    ffnn_status st = ffnn_mixed_sync(r);
    if (st != FFNN_OK ||
        (!x16_gathered && (st = r->ops->bf16->to_bf16(r->ctx, r->x, mx->x16, batch, m->input_size,
                                                m->input_size)) != FFNN_OK))
        return st;
    const uint16_t *in = mx->x16; /* [batch, layer.in] */
    for (int i = 0; i < layers; i++) {
        const ffnn_layer *l = &m->layers[i];
        const int last = i == m->layer_count - 1;
        if ((st = r->ops->bf16->dense_act_forward_bf16(
                 r->ctx, in, mx->params16 + l->weight_offset,
                 l->has_bias ? r->params + l->bias_offset : NULL,
                 l->has_bias ? mx->params16 + l->bias_offset : NULL, last ? r->act[i] : NULL,
                 last ? NULL : mx->act16[i], batch, l->in, l->out, l->act)))
            return st;
        in = mx->act16[i];
    }
    *output = r->act[m->layer_count - 1];
    return FFNN_OK;
}

/* Forward pass of `batch` rows already gathered into r->x (or, for a mixed step
 * with x16_gathered, into r->ext.mixed->x16) through the first `layers` layers (all
 * but the last for a head step: the head op computes the logits); returns the
 * last layer's output buffer. xt_side (or NULL: none made): after layer i's
 * forward, act[i]^T into r->ext.xt->act[i] on the second stream where layer i + 1 takes
 * it (ffnn_xt_for_layer); *xt_side is then 1 until a join (ffnn_step_head, backward). */
ffnn_status ffnn_step_forward_layers(ffnn_run *r, size_t batch, uint64_t t, float **output,
                                     int x16_gathered, int layers, int *xt_side)
{
    const ffnn_model *m = r->model;
    const float *in = r->x; /* [batch, layer.in] */
    ffnn_status st;
    if (ffnn_mixed_step(r, t))
        return forward_bf16(r, batch, output, x16_gathered, layers);
    for (int i = 0; i < layers; i++) {
        const ffnn_layer *l = &m->layers[i];
        const float *W = r->params + l->weight_offset; /* [out, fan_in] */
        const float *b = l->has_bias ? r->params + l->bias_offset : NULL;
        if (r->plan.fused && l->kind == FFNN_LAYER_DENSE) { /* bias + act in the epilogue */
            if ((st = r->ops->fused->dense_act_forward(r->ctx, in, W, b, r->act[i], batch, l->in,
                                                l->out, l->act)))
                return st;
            float *act_t = xt_side ? ffnn_xt_for_layer(r, i + 1, batch) : NULL;
            if (act_t &&
                ((st = ffnn_step_side_open(r, xt_side)) != FFNN_OK ||
                 (st = ffnn_step_side_close(r, r->ops->xt->prepare_xt(r->ctx, r->act[i], batch,
                                                                  l->out, act_t))) != FFNN_OK))
                return st;
            in = r->act[i];
            continue;
        }
        /* z [batch, out]: in place, or kept in pre[i] for a backward that reads it */
        float *z = r->pre[i] ? r->pre[i] : r->act[i];
        switch (l->kind) {
        case FFNN_LAYER_DENSE:
            st = r->ops->dense_forward(r->ctx, in, W, b, z, batch, l->in, l->out);
            break;
        case FFNN_LAYER_LOCAL1D: /* the activation runs below, as for dense layers */
            st = r->ops->local1d_forward(r->ctx, in, W, b, z, batch, l->in,
                                         l->spec.local1d.R, l->spec.local1d.padding,
                                         FFNN_ACT_IDENTITY);
            break;
        case FFNN_LAYER_EMBEDDING: /* layer 0, identity: straight into act[0] */
            st = r->ops->embedding_forward(r->ctx, in, W, z, batch, &l->spec.embedding);
            break;
        default:
            st = ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "layer %d: unknown kind %d", i,
                           (int)l->kind);
        }
        if (st != FFNN_OK)
            return st;
        if ((l->act != FFNN_ACT_IDENTITY || z != r->act[i]) &&
            (st = r->ops->activation_forward(r->ctx, l->act, l->act_param, z, r->act[i],
                                             batch * l->out)))
            return st;
        in = r->act[i];
        if (t > 0 && l->has_dropout) { /* training: the next layer sees d = dropout(a) */
            if ((st = ffnn_step_dropout(r, i, t, r->act[i], r->drop[i], batch * l->out)))
                return st;
            in = r->drop[i];
        }
    }
    *output = r->act[m->layer_count - 1];
    return FFNN_OK;
}

ffnn_status ffnn_step_forward(ffnn_run *r, size_t batch, uint64_t t, float **output)
{
    return ffnn_step_forward_layers(r, batch, t, output, 0, r->model->layer_count, NULL);
}
