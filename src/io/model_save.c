/*
 * model_save.c - ffnn_model_save, ffnn_model_save_interrupted: an ffnn model as
 * a safetensors file (the layout model_load.c reads, docs/FORMATS.md), written
 * atomically (io/atomic_file.h): the length, the header (metadata and one entry
 * per tensor, in arena order), then the parameter arena and the standardisation
 * as little-endian float32.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/model.h"
#include "io/atomic_file.h"
#include "io/model_file.h"
#include "io/safetensors.h"

/* Add item to obj under key; 0 (item freed) when out of memory. */
static int st_add(cJSON *obj, const char *key, cJSON *item)
{
    if (item && cJSON_AddItemToObject(obj, key, item))
        return 1;
    cJSON_Delete(item);
    return 0;
}

/* {"dtype": "F32", "shape": dims [rank], "data_offsets": [begin, end]}, the
 * offsets in bytes from float offsets; 0 when out of memory. */
static int st_add_tensor(cJSON *root, const char *name, const double *dims, int rank,
                         size_t first, size_t count)
{
    double offsets[2] = {4.0 * (double)first, 4.0 * (double)(first + count)};
    cJSON *t = cJSON_CreateObject();

    if (!st_add(root, name, t))
        return 0;
    return cJSON_AddStringToObject(t, "dtype", "F32") &&
           st_add(t, "shape", cJSON_CreateDoubleArray(dims, rank)) &&
           st_add(t, "data_offsets", cJSON_CreateDoubleArray(offsets, 2));
}

/* The model's standardize tensor s (1-4, ffnn_st_stat_names), or NULL. */
static const float *st_stat(const ffnn_model *m, int s)
{
    const float *v[5] = {NULL, m->input_mean, m->input_scale, m->target_mean, m->target_scale};
    return v[s];
}

/* The entries of the plain model m's tensors, each name after prefix ("" or
 * "members.<i>."), in arena order from float *at (advanced past them: the
 * parameters, then the standardisation); 0 when out of memory. */
static int st_add_tensors(cJSON *root, const ffnn_model *m, const char *prefix, size_t *at)
{
    char name[96];
    for (int i = 0; i < m->layer_count; i++) {
        const ffnn_layer *l = &m->layers[i];
        size_t shape[2];
        const int rank = ffnn_layer_weight_shape(l, shape);
        double wdims[2] = {(double)shape[0], (double)shape[1]}, dims[1] = {(double)l->out};
        snprintf(name, sizeof name, "%slayers.%d.weight", prefix, i);
        if (!st_add_tensor(root, name, wdims, rank, *at + l->weight_offset,
                           ffnn_layer_weights(l)))
            return 0;
        snprintf(name, sizeof name, "%slayers.%d.bias", prefix, i);
        if (l->has_bias && !st_add_tensor(root, name, dims, 1, *at + l->bias_offset, l->out))
            return 0;
    }
    *at += m->parameter_count; /* the standardisation after the arena */
    for (int s = 1; s <= 4; s++) {
        const float *v = st_stat(m, s);
        double n = (double)(s <= 2 ? m->input_size : m->layers[m->layer_count - 1].out);
        snprintf(name, sizeof name, "%s%s", prefix, ffnn_st_stat_names[s]);
        if (v && !st_add_tensor(root, name, &n, 1, *at, (size_t)n))
            return 0;
        *at += v ? (size_t)n : 0;
    }
    return 1;
}

/* __metadata__ and one entry per tensor, in arena order; 0 when out of memory.
 * An ensemble: format "ffnn-ensemble", members K and member.<i>.arch instead of
 * arch, and each member's tensors under "members.<i>.", member after member. */
static int st_fill_header(cJSON *root, const ffnn_model *m, const char *arch, ffnn_loss loss,
                          const char *interrupted)
{
    cJSON *md = cJSON_AddObjectToObject(root, "__metadata__");
    char name[64];

    if (!md || !cJSON_AddStringToObject(md, "format", m->member_count ? ST_ENSEMBLE_FORMAT
                                                                      : ST_FORMAT) ||
        (!m->member_count && !cJSON_AddStringToObject(md, "arch", arch)) ||
        !cJSON_AddStringToObject(md, "loss", ffnn_loss_name(loss)) ||
        !cJSON_AddStringToObject(md, "ffnn_version", FFNN_VERSION) ||
        (interrupted && !cJSON_AddStringToObject(md, "interrupted", interrupted)))
        return 0;
    if (m->class_names) {
        cJSON *names = cJSON_CreateStringArray((const char *const *)m->class_names,
                                               m->class_name_count);
        char *text = names ? cJSON_PrintUnformatted(names) : NULL;
        cJSON_Delete(names);
        int ok = text && cJSON_AddStringToObject(md, "class_names", text);
        cJSON_free(text);
        if (!ok)
            return 0;
    }
    if (m->table && !cJSON_AddStringToObject(md, "table", m->table))
        return 0;
    size_t at = 0;
    if (!m->member_count)
        return st_add_tensors(root, m, "", &at);
    snprintf(name, sizeof name, "%d", m->member_count);
    if (!cJSON_AddStringToObject(md, "members", name))
        return 0;
    for (int i = 0; i < m->member_count; i++) {
        const ffnn_model *e = m->members[i];
        size_t size = ffnn_arch_format_size(e->layer_count);
        char *text = malloc(size), prefix[32];
        if (text)
            ffnn_model_arch_string(e, text, size);
        snprintf(name, sizeof name, "member.%d.arch", i);
        snprintf(prefix, sizeof prefix, "members.%d.", i);
        int ok = text && cJSON_AddStringToObject(md, name, text);
        free(text);
        if (!ok || !st_add_tensors(root, e, prefix, &at))
            return 0;
    }
    return 1;
}

/* What st_fill_header takes besides the root and the architecture. */
typedef struct model_header {
    const ffnn_model *m;
    ffnn_loss loss;
    const char *interrupted;
} model_header;

static int model_fill_header(cJSON *root, const char *arch, const void *ctx)
{
    const model_header *h = ctx;
    return st_fill_header(root, h->m, arch, h->loss, h->interrupted);
}

/* The header text padded with spaces to a multiple of 8 bytes (so that the data
 * section is 8-byte aligned); *text malloc'd. */
static ffnn_status st_build_header(const ffnn_model *m, ffnn_loss loss, const char *interrupted,
                                   char **text, size_t *size)
{
    const model_header h = {m, loss, interrupted};
    return ffnn_st_build_header(m, model_fill_header, &h, "a model file header", text, size);
}

typedef struct st_writer {
    const ffnn_model *m;
    const char *header; /* [header_size] */
    size_t header_size;
} st_writer;

/* The plain model m's parameter arena, then its standardisation, as
 * little-endian float32. */
static ffnn_status st_write_model(ffnn_atomic_file *af, const ffnn_model *m)
{
    ffnn_status st = ffnn_st_write_f32(af, m->params, m->parameter_count);
    for (int s = 1; s <= 4 && st == FFNN_OK; s++) {
        size_t n = s <= 2 ? m->input_size : m->layers[m->layer_count - 1].out;
        if (st_stat(m, s))
            st = ffnn_st_write_f32(af, st_stat(m, s), n);
    }
    return st;
}

/* Length, header, then the data: the model's, or each member's in turn. */
static ffnn_status st_fill(ffnn_atomic_file *af, void *user)
{
    const st_writer *w = user;
    ffnn_status st;

    if ((st = ffnn_st_write_start(af, w->header, w->header_size)) != FFNN_OK)
        return st;
    if (!w->m->member_count)
        return st_write_model(af, w->m);
    for (int i = 0; i < w->m->member_count && st == FFNN_OK; i++)
        st = st_write_model(af, w->m->members[i]);
    return st;
}

/* Refuse NaN and Inf parameters, naming the tensor and element. */
static ffnn_status st_check_finite(const ffnn_model *m, const char *path)
{
    for (int k = 0; k < m->member_count; k++) {
        ffnn_status st = st_check_finite(m->members[k], path);
        if (st != FFNN_OK) {
            char why[600];
            snprintf(why, sizeof why, "%s (ensemble member %d, \"members.%d.\")",
                     ffnn_last_error(), k, k);
            return ffnn_fail(st, "%s", why);
        }
    }
    for (int i = 0; i < m->layer_count; i++) {
        const ffnn_layer *l = &m->layers[i];
        for (int bias = 0; bias <= l->has_bias; bias++) {
            const float *v = m->params + (bias ? l->bias_offset : l->weight_offset);
            size_t n = bias ? l->out : ffnn_layer_weights(l);
            for (size_t k = 0; k < n; k++)
                if (!isfinite(v[k]))
                    return ffnn_fail(FFNN_ERR_NUMERIC, "%s: not saved: tensor "
                                     "\"layers.%d.%s\" element %zu is %g", path, i,
                                     bias ? "bias" : "weight", k, (double)v[k]);
        }
    }
    return FFNN_OK;
}

ffnn_status ffnn_model_save(const ffnn_model *m, const char *path)
{
    return ffnn_model_save_interrupted(m, path, NULL);
}

ffnn_status ffnn_model_save_interrupted(const ffnn_model *m, const char *path,
                                        const char *interrupted)
{
    ffnn_loss loss;
    st_writer w = {m, NULL, 0};
    char *header = NULL;
    ffnn_status st;

    if (!m || !path)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_model_save: NULL argument");
    if (interrupted && (!*interrupted || strlen(interrupted) >= ST_INTERRUPTED_MAX))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_model_save_interrupted: expected a "
                         "note of 1 to %d characters, found %zu", ST_INTERRUPTED_MAX - 1,
                         strlen(interrupted));
    if ((st = ffnn_model_fresh(m)) != FFNN_OK) /* a model in training: its latest weights */
        return st;
    if ((st = ffnn_model_loss(m, &loss)) != FFNN_OK ||          /* the model's own */
        (st = ffnn_model_check_loss(m, loss)) != FFNN_OK)          /* what the reader refuses */
        return ffnn_fail_context_at(st, path, ": not saved");
    if ((st = st_check_finite(m, path)) != FFNN_OK ||
        (st = st_build_header(m, loss, interrupted, &header, &w.header_size)) != FFNN_OK)
        return st;
    w.header = header;
    st = ffnn_atomic_write(path, st_fill, &w);
    free(header);
    return st;
}
