/* model.c - the model: architecture, parameter arena, PyTorch-style init, and a
 * CPU forward pass for inference (dense, local1d and embedding layers). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/memory.h"
#include "core/model.h"
#include "core/rng.h"

ffnn_status ffnn_model_create_layout(const char *arch, ffnn_model **out)
{
    if (!out)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_model_create: out is NULL");
    ffnn_model *m = calloc(1, sizeof *m);
    if (!m)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory creating a model");
    ffnn_status st = ffnn_arch_parse(arch, &m->input_size, &m->layers,
                                     &m->layer_count, &m->parameter_count);
    if (st != FFNN_OK) {
        free(m);
        return st;
    }
    *out = m;
    return FFNN_OK;
}

ffnn_status ffnn_model_alloc_params(ffnn_model *m)
{
    char detail[64];
    snprintf(detail, sizeof detail, "%zu float32 parameters", m->parameter_count);
    ffnn_status st = ffnn_memory_check_host("the network", (uint64_t)m->parameter_count * 4,
                                            detail);
    if (st != FFNN_OK)
        return st;
    m->params = calloc(m->parameter_count, sizeof *m->params);
    if (!m->params)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory: %zu parameters",
                         m->parameter_count);
    return FFNN_OK;
}

ffnn_status ffnn_model_create(const char *arch, ffnn_model **out)
{
    ffnn_model *m = NULL;
    ffnn_status st = ffnn_model_create_layout(arch, &m);
    if (st == FFNN_OK && (st = ffnn_model_alloc_params(m)) != FFNN_OK) {
        ffnn_model_free(m);
        m = NULL;
    }
    if (st == FFNN_OK)
        *out = m;
    return st;
}

void ffnn_model_free(ffnn_model *m)
{
    if (!m)
        return;
    if (m->layers) /* frees the statistics and names (it reads the layers) */
        ffnn_model_set_standardization(m, NULL, NULL, NULL, NULL);
    ffnn_model_set_class_names(m, NULL, 0);
    ffnn_model_set_table_json(m, NULL);
    for (int i = 0; i < m->member_count; i++)
        ffnn_model_free(m->members[i]);
    free(m->members);
    ffnn_layers_free(m->layers, m->layer_count);
    free(m->params);
    free(m);
}

/* nn.Linear.reset_parameters: kaiming_uniform_(a=sqrt(5)) gives the bound
 * gain*sqrt(3/fan_in) with gain = sqrt(2/(1+5)), i.e. 1/sqrt(fan_in); the bias
 * bound is 1/sqrt(fan_in) too. fan_in: in (dense), R (local1d: each output is a
 * small linear unit over R inputs). */
ffnn_status ffnn_model_init(ffnn_model *m, uint64_t seed)
{
    if (!m)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_model_init: model is NULL");
    if (m->member_count)
        return ffnn_model_refuse_ensemble(m, "ffnn_model_init");
    ffnn_rng rng;
    ffnn_rng_seed(&rng, seed, FFNN_STREAM_INIT);
    for (int i = 0; i < m->layer_count; i++) {
        const ffnn_layer *l = &m->layers[i];
        if (l->kind == FFNN_LAYER_EMBEDDING) { /* nn.Embedding: N(0, 1), Box-Muller */
            float *W = m->params + l->weight_offset; /* [sum n_j d_j] */
            for (size_t k = 0; k < l->spec.embedding.weights; k++) {
                const double u1 = 1.0 - (double)ffnn_rng_uniform(&rng); /* (0, 1] */
                const double u2 = (double)ffnn_rng_uniform(&rng);
                W[k] = (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
            }
            continue;
        }
        float bound = 1.0f / sqrtf((float)l->fan_in);
        float *W = m->params + l->weight_offset; /* [out, fan_in] */
        for (size_t k = 0; k < l->fan_in * l->out; k++)
            W[k] = (2.0f * ffnn_rng_uniform(&rng) - 1.0f) * bound;
        if (l->has_bias) {
            float *b = m->params + l->bias_offset; /* [out] */
            for (size_t k = 0; k < l->out; k++)
                b[k] = (2.0f * ffnn_rng_uniform(&rng) - 1.0f) * bound;
        }
    }
    return FFNN_OK;
}

int ffnn_model_layer_count(const ffnn_model *m) { return m->layer_count; }
size_t ffnn_model_input_size(const ffnn_model *m) { return m->input_size; }
size_t ffnn_model_output_size(const ffnn_model *m)
{
    return ffnn_model_out(m);
}
size_t ffnn_model_parameter_count(const ffnn_model *m) { return m->parameter_count; }
float *ffnn_model_parameters(ffnn_model *m)
{
    return m && ffnn_model_sync(m) == FFNN_OK ? m->params : NULL;
}

size_t ffnn_model_arch_string(const ffnn_model *m, char *buf, size_t buf_size)
{
    if (m->member_count)
        return ffnn_ensemble_arch_string(m, buf, buf_size);
    return ffnn_arch_format(m->input_size, m->layers, m->layer_count, buf, buf_size);
}

/* Layer i of m into *l; FFNN_ERR_INVALID_ARGUMENT (naming the range) when there is
 * none. */
static ffnn_status layer_at(const ffnn_model *m, int i, const ffnn_layer **l)
{
    if (!m || i < 0 || i >= m->layer_count)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "layer index %d out of range [0, %d)",
                         i, m ? m->layer_count : 0);
    *l = &m->layers[i];
    return FFNN_OK;
}

ffnn_status ffnn_model_layer(const ffnn_model *m, int i, size_t *in, size_t *out,
                             ffnn_activation *act, int *has_bias)
{
    const ffnn_layer *l = NULL;
    ffnn_status st = layer_at(m, i, &l);
    if (st != FFNN_OK)
        return st;
    if (in) *in = l->in;
    if (out) *out = l->out;
    if (act) *act = l->act;
    if (has_bias) *has_bias = l->has_bias;
    return FFNN_OK;
}

ffnn_status ffnn_model_layer_kind(const ffnn_model *m, int i, ffnn_layer_kind *kind,
                                  size_t *fan_in, int *same_padding)
{
    const ffnn_layer *l = NULL;
    ffnn_status st = layer_at(m, i, &l);
    if (st != FFNN_OK)
        return st;
    if (kind) *kind = l->kind;
    if (fan_in) *fan_in = l->fan_in;
    if (same_padding)
        *same_padding = l->kind == FFNN_LAYER_LOCAL1D &&
                        l->spec.local1d.padding == FFNN_LOCAL1D_SAME;
    return FFNN_OK;
}

ffnn_status ffnn_model_embedding(const ffnn_model *m, int i, size_t *count, size_t *levels,
                                 size_t *dims, size_t capacity)
{
    if (!m || i < 0 || i >= m->layer_count || m->layers[i].kind != FFNN_LAYER_EMBEDDING)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "layer %d is not an embedding layer", i);
    const ffnn_embedding_spec *e = &m->layers[i].spec.embedding;
    if (count) *count = e->count;
    for (size_t j = 0; j < e->count && j < capacity; j++) {
        if (levels) levels[j] = e->table[j].levels;
        if (dims) dims[j] = e->table[j].dim;
    }
    return FFNN_OK;
}

float *ffnn_model_weight(ffnn_model *m, int i)
{
    if (!m || i < 0 || i >= m->layer_count || ffnn_model_sync(m) != FFNN_OK)
        return NULL;
    return m->params + m->layers[i].weight_offset;
}

float *ffnn_model_bias(ffnn_model *m, int i)
{
    if (!m || i < 0 || i >= m->layer_count || !m->layers[i].has_bias ||
        ffnn_model_sync(m) != FFNN_OK)
        return NULL;
    return m->params + m->layers[i].bias_offset;
}
