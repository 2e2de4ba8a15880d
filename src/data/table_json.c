/* table_json.c - a fitted table encoding as JSON text and back (table.h), the
 * form models and model files keep it in (__metadata__ "table", docs/FORMATS.md),
 * by cJSON; a model's encoding as an ffnn_table (ffnn_model_table, include/ffnn.h). */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/error.h"
#include "core/model.h"
#include "data/table.h"

ffnn_status ffnn_table_to_json(const ffnn_table *t, char **out)
{
    cJSON *root = cJSON_CreateObject(), *cols = cJSON_AddArrayToObject(root, "columns");
    int ok = root && cols && cJSON_AddNumberToObject(root, "width", (double)t->width);
    for (size_t i = 0; ok && i < t->count; i++) {
        const ffnn_table_column *c = &t->col[i];
        cJSON *o = cJSON_CreateObject();
        ok = o && cJSON_AddItemToArray(cols, o) && cJSON_AddStringToObject(o, "name", c->name) &&
             cJSON_AddStringToObject(o, "kind", c->categorical ? "categorical" : "numeric");
        if (ok && c->categorical) {
            cJSON *lv = cJSON_CreateStringArray((const char *const *)c->levels,
                                                (int)c->level_count);
            ok = lv && cJSON_AddItemToObject(o, "levels", lv) &&
                 (!c->embed_dim || cJSON_AddNumberToObject(o, "embedding", (double)c->embed_dim));
        } else if (ok) {
            ok = cJSON_AddNumberToObject(o, "median", (double)c->median) &&
                 cJSON_AddBoolToObject(o, "indicator", c->indicator);
        }
    }
    char *text = ok ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    if (!text)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for the table encoding");
    size_t n = strlen(text);
    *out = malloc(n + 1);
    if (*out)
        memcpy(*out, text, n + 1);
    cJSON_free(text);
    return *out ? FFNN_OK : ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
}

/* Column i of the JSON into c. */
static ffnn_status column_from_json(const cJSON *o, size_t i, ffnn_table_column *c)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(o, "name");
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(o, "kind");
    if (!cJSON_IsString(name) || !cJSON_IsString(kind) ||
        (strcmp(kind->valuestring, "numeric") && strcmp(kind->valuestring, "categorical")))
        return ffnn_fail(FFNN_ERR_FORMAT, "table: column %zu: expected a string \"name\" and "
                         "\"kind\" numeric or categorical", i);
    if (!(c->name = strdup(name->valuestring)))
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
    c->categorical = strcmp(kind->valuestring, "categorical") == 0;
    if (!c->categorical) {
        const cJSON *med = cJSON_GetObjectItemCaseSensitive(o, "median");
        const cJSON *ind = cJSON_GetObjectItemCaseSensitive(o, "indicator");
        if (!cJSON_IsNumber(med) || !isfinite(med->valuedouble) ||
            fabs(med->valuedouble) > 3.4e38 || !cJSON_IsBool(ind))
            return ffnn_fail(FFNN_ERR_FORMAT, "table: column %zu: expected a finite \"median\" "
                             "and a boolean \"indicator\"", i);
        c->median = (float)med->valuedouble;
        c->indicator = cJSON_IsTrue(ind);
        return FFNN_OK;
    }
    const cJSON *emb = cJSON_GetObjectItemCaseSensitive(o, "embedding");
    if (emb && (!cJSON_IsNumber(emb) || !(emb->valuedouble >= 1 && emb->valuedouble <= 16777216) ||
                emb->valuedouble != floor(emb->valuedouble)))
        return ffnn_fail(FFNN_ERR_FORMAT, "table: column %zu: \"embedding\" is a dimension, "
                         "an integer in [1, 2^24]", i);
    c->embed_dim = emb ? (size_t)emb->valuedouble : 0;
    const cJSON *lv = cJSON_GetObjectItemCaseSensitive(o, "levels");
    int n = cJSON_IsArray(lv) ? cJSON_GetArraySize(lv) : -1;
    if (n < 0)
        return ffnn_fail(FFNN_ERR_FORMAT, "table: column %zu: expected an array \"levels\"", i);
    if (n > 0 && !(c->levels = calloc((size_t)n, sizeof *c->levels)))
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
    const cJSON *e;
    cJSON_ArrayForEach(e, lv) {
        if (!cJSON_IsString(e))
            return ffnn_fail(FFNN_ERR_FORMAT, "table: column %zu: level %zu is not a string",
                             i, c->level_count);
        if (c->level_count > 0 && strcmp(c->levels[c->level_count - 1], e->valuestring) >= 0)
            return ffnn_fail(FFNN_ERR_FORMAT, "table: column %zu: levels not sorted and "
                             "distinct at level %zu", i, c->level_count);
        if (!(c->levels[c->level_count] = strdup(e->valuestring)))
            return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
        c->level_count++;
    }
    return FFNN_OK;
}

ffnn_status ffnn_table_from_json(const char *json, ffnn_table **out)
{
    cJSON *root = cJSON_Parse(json);
    const cJSON *cols = root ? cJSON_GetObjectItemCaseSensitive(root, "columns") : NULL;
    const cJSON *width = root ? cJSON_GetObjectItemCaseSensitive(root, "width") : NULL;
    ffnn_status st = FFNN_OK;
    int n = cJSON_IsArray(cols) ? cJSON_GetArraySize(cols) : 0;
    if (n < 1 || !cJSON_IsNumber(width)) {
        cJSON_Delete(root);
        return ffnn_fail(FFNN_ERR_FORMAT, "table: expected a JSON object with an array "
                         "\"columns\" and a number \"width\"");
    }
    ffnn_table *t = calloc(1, sizeof *t);
    if (!t || !(t->col = calloc((size_t)n, sizeof *t->col))) {
        free(t);
        cJSON_Delete(root);
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
    }
    t->fitted = 1;
    const cJSON *o;
    size_t sum = 0;
    cJSON_ArrayForEach(o, cols) {
        t->count++;
        if ((st = column_from_json(o, t->count - 1, &t->col[t->count - 1])) != FFNN_OK)
            break;
        const ffnn_table_column *c = &t->col[t->count - 1];
        sum += ffnn_table_column_inputs(c);
    }
    if (st == FFNN_OK && (double)sum != width->valuedouble)
        st = ffnn_fail(FFNN_ERR_FORMAT, "table: \"width\" %g: expected %zu (the columns' "
                       "inputs)", width->valuedouble, sum);
    cJSON_Delete(root);
    if (st != FFNN_OK) {
        ffnn_table_free(t);
        return st;
    }
    t->width = sum;
    *out = t;
    return FFNN_OK;
}

ffnn_status ffnn_model_table(const ffnn_model *m, ffnn_table **out)
{
    if (!m || !out)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_model_table: NULL argument");
    *out = NULL;
    return m->table ? ffnn_table_from_json(m->table, out) : FFNN_OK;
}

/* The embedded columns of t are the tables of m's embedding layer, in order (n_j
 * the column's levels, d_j its dimension), or neither has any. */
static ffnn_status check_embedding(const ffnn_model *m, const ffnn_table *t)
{
    const ffnn_layer *l = &m->layers[0];
    const size_t k = l->kind == FFNN_LAYER_EMBEDDING ? l->spec.embedding.count : 0;
    size_t j = 0;
    for (size_t i = 0; i < t->count; i++) {
        const ffnn_table_column *c = &t->col[i];
        if (!c->embed_dim)
            continue;
        if (j >= k || l->spec.embedding.table[j].levels != c->level_count ||
            l->spec.embedding.table[j].dim != c->embed_dim)
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_model_set_table: column '%s' is "
                             "embedded (%zu levels, dimension %zu), but table %zu of the "
                             "model's first layer is %s", c->name, c->level_count, c->embed_dim,
                             j, j < k ? "another"
                                      : "missing (no embedding layer, or fewer tables)");
        j++;
    }
    if (j != k)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_model_set_table: the model's first "
                         "layer embeds %zu codes, the table %zu columns", k, j);
    return FFNN_OK;
}

ffnn_status ffnn_model_set_table(ffnn_model *m, const ffnn_table *t)
{
    char *json = NULL;
    if (!m)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_model_set_table: NULL model");
    if (t && !t->fitted)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_model_set_table: a raw table (the "
                         "columns of a file), expected a fitted one (ffnn_table_fit)");
    if (t && t->width != m->input_size)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_model_set_table: the table encodes "
                         "%zu inputs, the model takes %zu", t->width, m->input_size);
    ffnn_status st = t ? check_embedding(m, t) : FFNN_OK;
    if (st == FFNN_OK && t)
        st = ffnn_table_to_json(t, &json);
    if (st == FFNN_OK)
        st = ffnn_model_set_table_json(m, json);
    free(json);
    return st;
}
