/* table.c - the columns of a table behind a data set and their encoding into
 * the network's inputs: median imputation with missing indicators, one-hot
 * categories (table.h has the rules and the scikit-learn equivalent). */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include "data/table.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/embedding.h"
#include "core/error.h"
#include "data/dataset.h"

static void column_free(ffnn_table_column *c)
{
    for (size_t k = 0; k < c->level_count; k++)
        free(c->levels[k]);
    free(c->levels);
    free(c->name);
}

void ffnn_table_free(ffnn_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; t->col && i < t->count; i++)
        column_free(&t->col[i]);
    free(t->col);
    free(t);
}

ffnn_status ffnn_table_copy(const ffnn_table *t, ffnn_table **out)
{
    ffnn_table *c = calloc(1, sizeof *c);
    if (!c) {
        free(c);
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for a table's columns");
    }
    *c = *t;
    ffnn_table_column *cols = calloc(t->count ? t->count : 1, sizeof *cols);
    if (!cols) {
        free(c);
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for a table's columns");
    }
    c->col = cols;
    int ok = 1;
    for (size_t i = 0; i < t->count; i++) {
        const ffnn_table_column *s = &t->col[i];
        ffnn_table_column *d = &cols[i];
        *d = *s;
        d->name = strdup(s->name);
        d->levels = s->level_count ? calloc(s->level_count, sizeof *d->levels) : NULL;
        ok &= d->name && (!s->level_count || d->levels);
        for (size_t k = 0; ok && k < s->level_count; k++)
            ok &= (d->levels[k] = strdup(s->levels[k])) != NULL;
        if (!ok) {
            d->level_count = d->levels ? s->level_count : 0;
            c->count = i + 1;
            ffnn_table_free(c);
            return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for a table's columns");
        }
    }
    *out = c;
    return FFNN_OK;
}

const ffnn_table *ffnn_dataset_table(const ffnn_dataset *ds)
{
    return ds ? ds->table : NULL;
}

void ffnn_dataset_set_table(ffnn_dataset *ds, ffnn_table *t)
{
    if (ds->table != t)
        ffnn_table_free(ds->table);
    ds->table = t;
}

int ffnn_table_needs_encoding(const ffnn_table *raw)
{
    for (size_t i = 0; raw && i < raw->count; i++)
        if (raw->col[i].categorical || raw->col[i].missing > 0)
            return 1;
    return 0;
}

/* ------------------------------------------------------------ accessors */

/* Column i of t, or NULL out of range. */
static const ffnn_table_column *column_at(const ffnn_table *t, size_t i)
{
    return t && i < t->count ? &t->col[i] : NULL;
}

int ffnn_table_is_fitted(const ffnn_table *t) { return t ? t->fitted : 0; }
size_t ffnn_table_column_count(const ffnn_table *t) { return t ? t->count : 0; }
size_t ffnn_table_width(const ffnn_table *t) { return t && t->fitted ? t->width : 0; }
size_t ffnn_table_dropped(const ffnn_table *t) { return t ? t->dropped : 0; }

const char *ffnn_table_column_name(const ffnn_table *t, size_t i)
{
    const ffnn_table_column *c = column_at(t, i);
    return c ? c->name : NULL;
}

int ffnn_table_column_kind(const ffnn_table *t, size_t i)
{
    const ffnn_table_column *c = column_at(t, i);
    return !c ? -1 : c->categorical ? FFNN_TABLE_CATEGORICAL : FFNN_TABLE_NUMERIC;
}

size_t ffnn_table_level_count(const ffnn_table *t, size_t i)
{
    const ffnn_table_column *c = column_at(t, i);
    return c && c->categorical ? c->level_count : 0;
}

const char *ffnn_table_level(const ffnn_table *t, size_t i, size_t k)
{
    const ffnn_table_column *c = column_at(t, i);
    return c && c->categorical && k < c->level_count ? c->levels[k] : NULL;
}

size_t ffnn_table_missing(const ffnn_table *t, size_t i)
{
    const ffnn_table_column *c = column_at(t, i);
    return c ? c->missing : 0;
}

float ffnn_table_median(const ffnn_table *t, size_t i)
{
    const ffnn_table_column *c = column_at(t, i);
    return c && !c->categorical && t->fitted ? c->median : NAN;
}

int ffnn_table_indicator(const ffnn_table *t, size_t i)
{
    const ffnn_table_column *c = column_at(t, i);
    return c && !c->categorical && t->fitted ? c->indicator : 0;
}

/* ------------------------------------------------------------ fitting */

static int compare_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

static int compare_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char table_missing_level[] = "missing";

/* Numeric column i: the median of its present values (the mean of the middle
 * two for an even count, as numpy.median) and whether it had missing ones. */
static ffnn_status fit_numeric(const ffnn_dataset *train, size_t i, ffnn_table_column *c,
                               float *scratch)
{
    size_t n = 0, w = train->features;
    for (size_t r = 0; r < train->count; r++) {
        float v = train->values[r * w + i];
        if (v == v)
            scratch[n++] = v;
    }
    if (n == 0)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "column '%s': every cell of the training "
                         "split is missing (nothing to fill them with); drop it: --ignore",
                         c->name);
    qsort(scratch, n, sizeof *scratch, compare_float);
    c->median = n % 2 ? scratch[n / 2]
                      : (float)(((double)scratch[n / 2 - 1] + (double)scratch[n / 2]) / 2.0);
    c->missing = train->count - n;
    c->indicator = c->missing > 0;
    return FFNN_OK;
}

/* Categorical column i: the levels the training split has, sorted by bytes
 * (as scikit-learn's OneHotEncoder), plus "missing" when it has missing cells. */
static ffnn_status fit_categorical(const ffnn_dataset *train, size_t i, ffnn_table_column *c)
{
    size_t w = train->features, kept = 0, missing = 0;
    unsigned char *seen = calloc(c->level_count + 1, 1);
    if (!seen)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
    for (size_t r = 0; r < train->count; r++) {
        float v = train->values[r * w + i];
        if (v != v)
            missing++;
        else if (v >= 0.0f && (size_t)v < c->level_count)
            seen[(size_t)v] = 1;
    }
    for (size_t k = 0; k < c->level_count; k++) {
        if (seen[k])
            c->levels[kept++] = c->levels[k];
        else
            free(c->levels[k]);
    }
    free(seen);
    c->level_count = kept;
    c->missing = missing;
    int has_missing_level = 0;
    for (size_t k = 0; k < kept; k++)
        has_missing_level |= strcmp(c->levels[k], table_missing_level) == 0;
    if (missing && !has_missing_level) {
        char *m = strdup(table_missing_level);
        if (!m)
            return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
        c->levels[c->level_count++] = m; /* ffnn_table_fit made room for it */
    }
    qsort(c->levels, c->level_count, sizeof *c->levels, compare_text);
    c->indicator = 0;
    return FFNN_OK;
}

ffnn_status ffnn_table_fit(const ffnn_dataset *train, ffnn_table **out)
{
    return ffnn_table_fit_embedding(train, SIZE_MAX, NULL, out);
}

/* Embed the categorical columns of t with more than max_one_hot levels or a
 * dimension in dims (dims[i], or fastai's rule), and count t's inputs again. */
static ffnn_status choose_embeddings(ffnn_table *t, size_t max_one_hot, const size_t *dims)
{
    size_t embedded = 0;
    t->width = 0;
    for (size_t i = 0; i < t->count; i++) {
        ffnn_table_column *c = &t->col[i];
        if (c->categorical && c->level_count > 0 &&
            (c->level_count > max_one_hot || (dims && dims[i]))) {
            c->embed_dim = dims && dims[i] ? dims[i] : ffnn_embedding_dim_rule(c->level_count);
            if (c->embed_dim > (1u << 24))
                return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "column '%s': embedding dimension "
                                 "%zu above 2^24", c->name, c->embed_dim);
            embedded++;
        }
        t->width += ffnn_table_column_inputs(c);
    }
    if (embedded > FFNN_EMBEDDING_MAX_TABLES)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "%zu columns with more than %zu levels to "
                         "embed: an embedding layer takes at most %d (raise --max-one-hot, or "
                         "--ignore some)", embedded, max_one_hot, FFNN_EMBEDDING_MAX_TABLES);
    return FFNN_OK;
}

size_t ffnn_table_embedding_dim(const ffnn_table *t, size_t i)
{
    const ffnn_table_column *c = column_at(t, i);
    return c && c->categorical && t->fitted ? c->embed_dim : 0;
}

size_t ffnn_table_embedding_arch(const ffnn_table *t, char *buf, size_t size)
{
    size_t used = 0, k = 0;
    if (size)
        buf[0] = '\0';
    for (size_t i = 0; t && t->fitted && i < t->count; i++) {
        const ffnn_table_column *c = &t->col[i];
        if (!c->embed_dim)
            continue;
        used += (size_t)snprintf(used < size ? buf + used : NULL, used < size ? size - used : 0,
                                 "%s%zux%zu", k++ ? "_" : "embed", c->level_count, c->embed_dim);
    }
    return used;
}

ffnn_status ffnn_table_fit_embedding(const ffnn_dataset *train, size_t max_one_hot,
                                     const size_t *dims, ffnn_table **out)
{
    ffnn_table *t = NULL;
    ffnn_status st;
    if (!out)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_table_fit: NULL out");
    if (!train || !train->table || !train->values || train->table->count != train->features)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "fitting a table encoding: expected a data "
                         "set read from a table (its columns), found none");
    if ((st = ffnn_table_copy(train->table, &t)) != FFNN_OK)
        return st;
    float *scratch = malloc((train->count ? train->count : 1) * sizeof *scratch);
    if (!scratch) {
        ffnn_table_free(t);
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
    }
    t->fitted = 1;
    t->width = 0;
    for (size_t i = 0; i < t->count; i++) {
        ffnn_table_column *c = &t->col[i];
        if (c->categorical) {
            /* one slot more for "missing" */
            char **grown = realloc(c->levels, (c->level_count + 1) * sizeof *grown);
            if (!grown) {
                st = ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
                break;
            }
            c->levels = grown;
        }
        st = c->categorical ? fit_categorical(train, i, c) : fit_numeric(train, i, c, scratch);
        if (st != FFNN_OK)
            break;
    }
    free(scratch);
    if (st == FFNN_OK)
        st = choose_embeddings(t, max_one_hot, dims);
    if (st != FFNN_OK) {
        ffnn_table_free(t);
        return st;
    }
    *out = t;
    return FFNN_OK;
}

/* ------------------------------------------------------------ encoding */

/* map [src level_count]: src level id -> enc level index, or SIZE_MAX. */
static ffnn_status level_map(const ffnn_table_column *enc, const ffnn_table_column *src,
                             size_t **map, size_t *missing_at)
{
    *map = malloc((src->level_count + 1) * sizeof **map);
    if (!*map)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
    *missing_at = SIZE_MAX;
    for (size_t k = 0; k < enc->level_count; k++)
        if (strcmp(enc->levels[k], table_missing_level) == 0)
            *missing_at = k;
    for (size_t s = 0; s < src->level_count; s++) {
        char *const *hit = bsearch(&src->levels[s], enc->levels, enc->level_count,
                                   sizeof *enc->levels, compare_text);
        (*map)[s] = hit ? (size_t)(hit - enc->levels) : SIZE_MAX;
    }
    return FFNN_OK;
}

ffnn_status ffnn_table_encode(const ffnn_table *enc, const ffnn_dataset *src, size_t *unseen,
                              ffnn_dataset **out)
{
    const ffnn_table *raw = src ? src->table : NULL;
    size_t f = src ? src->features : 0, bad = 0;
    if (!enc || !enc->fitted || !src || !src->values || !out)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "encoding a table: NULL argument or a "
                         "raw table as the encoding");
    if (f != enc->count)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "encoding a table: expected %zu feature "
                         "columns (the model's), found %zu", enc->count, f);
    for (size_t i = 0; i < f; i++) {
        int cat = raw ? raw->col[i].categorical : 0;
        if (cat != enc->col[i].categorical)
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "encoding a table: column %zu ('%s'): "
                             "expected %s values (as in training), found %s", i + 1,
                             enc->col[i].name, enc->col[i].categorical ? "categorical"
                                                                       : "numeric",
                             cat ? "text" : "numbers");
    }
    ffnn_dataset *ds = NULL;
    ffnn_status st = ffnn_dataset_alloc_kind(src->count, 1, enc->width, 1, src->target_width, &ds);
    if (st != FFNN_OK)
        return st;
    size_t **maps = calloc(f, sizeof *maps), *missing_at = calloc(f, sizeof *missing_at);
    if (!maps || !missing_at)
        st = ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; st == FFNN_OK && i < f; i++)
        if (enc->col[i].categorical)
            st = level_map(&enc->col[i], &raw->col[i], &maps[i], &missing_at[i]);
    size_t indicators = 0, codes = 0;
    for (size_t i = 0; i < f; i++) {
        indicators += !enc->col[i].categorical && enc->col[i].indicator;
        codes += enc->col[i].categorical && enc->col[i].embed_dim;
    }
    for (size_t r = 0; st == FFNN_OK && r < src->count; r++) {
        const float *x = src->values + r * f;
        float *y = ds->values + r * enc->width;            /* [width] */
        float *code = y + enc->width - codes;              /* the codes, last */
        float *ind = code - indicators;                    /* the indicators before them */
        memset(y, 0, enc->width * sizeof *y);
        for (size_t i = 0; i < f; i++) {
            const ffnn_table_column *c = &enc->col[i];
            float v = x[i];
            if (!c->categorical) {
                *y++ = v == v ? v : c->median;
                if (c->indicator)
                    *ind++ = v == v ? 0.0f : 1.0f;
                continue;
            }
            size_t k = v != v ? missing_at[i]
                       : v >= 0.0f && (size_t)v < raw->col[i].level_count ? maps[i][(size_t)v]
                                                                          : SIZE_MAX;
            bad += k == SIZE_MAX;
            if (c->embed_dim) { /* the level's index; -1 (zeros) for one training lacked */
                *code++ = k == SIZE_MAX ? -1.0f : (float)k;
                continue;
            }
            if (k != SIZE_MAX)
                y[k] = 1.0f;
            y += c->level_count;
        }
    }
    for (size_t i = 0; maps && i < f; i++)
        free(maps[i]);
    free(maps);
    free(missing_at);
    if (st == FFNN_OK) {
        if (src->labels)
            memcpy(ds->labels, src->labels, src->count * sizeof *ds->labels);
        else
            memcpy(ds->targets, src->targets, src->count * src->target_width * sizeof(float));
        ds->classes = src->classes;
        if (src->class_names)
            st = ffnn_dataset_set_class_names(ds, (const char *const *)src->class_names,
                                              (size_t)src->classes);
    }
    ffnn_table *copy = NULL;
    if (st == FFNN_OK && (st = ffnn_table_copy(enc, &copy)) == FFNN_OK)
        ffnn_dataset_set_table(ds, copy);
    if (st != FFNN_OK) {
        ffnn_dataset_free(ds);
        return st;
    }
    if (unseen)
        *unseen = bad;
    *out = ds;
    return FFNN_OK;
}
