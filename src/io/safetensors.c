/*
 * safetensors.c - ffnn models as safetensors files
 * (format: https://github.com/huggingface/safetensors, docs/FORMATS.md):
 *
 *   [8 bytes]   N, the header length: uint64, little-endian
 *   [N bytes]   the header: a UTF-8 JSON object, padded with spaces
 *   [the rest]  the data section: every tensor's bytes, little-endian
 *
 * The header maps each tensor name to {"dtype", "shape", "data_offsets":
 * [begin, end]} (byte offsets into the data section) and "__metadata__" to an
 * object of strings. ffnn's tensors are layers.<i>.weight F32 [out, fan_in]
 * ([out, in] for a dense layer, [out, R] for a local1d layer: the arch string
 * tells which) and layers.<i>.bias F32 [out]; the metadata holds format
 * "ffnn-model", arch, loss and ffnn_version.
 *
 * Reading checks, in this order, what the reference reader checks (header
 * length limit and bounds, UTF-8, a JSON object, offsets that tile the data
 * section exactly, size = shape x dtype size without overflow) plus unique
 * keys and known dtypes, then what ffnn needs (metadata, every tensor of the
 * architecture present with its shape, F32, no zero dimension, nothing extra),
 * and only then allocates the model and reads the data. The generic reader
 * (ffnn_st_*, io/safetensors.h) also serves checkpoints (io/checkpoint.c).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <cjson/cJSON.h>

#include "data/table.h"
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/safetensors.h"
#include "core/model.h"

#define ST_MAX_HEADER 100000000ull          /* the reference reader's limit: 100 MB */
#define ST_MAX_EXACT ((uint64_t)1 << 53)    /* JSON numbers reach cJSON as doubles  */
#define ST_FORMAT "ffnn-model"              /* __metadata__ "format"                */
#define ST_VERSION_MAX 64                   /* ffnn_version: at most 63 characters  */
#define ST_INTERRUPTED_MAX 128              /* interrupted: at most 127 characters  */
enum { ST_CHUNK = 4096 };                   /* floats per conversion buffer         */

/* ------------------------------------------------------------ dtypes */

/* The dtypes of the safetensors specification (sub-byte types excluded). */
static const st_dtype st_dtypes[] = {
    {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1},
    {"I16", 2},  {"U16", 2}, {"F16", 2}, {"BF16", 2},    {"I32", 4},
    {"U32", 4},  {"F32", 4}, {"I64", 8}, {"U64", 8},     {"F64", 8},
};

static const st_dtype *st_find_dtype(const char *name)
{
    for (size_t i = 0; i < sizeof st_dtypes / sizeof st_dtypes[0]; i++)
        if (strcmp(st_dtypes[i].name, name) == 0)
            return &st_dtypes[i];
    return NULL;
}

/* ------------------------------------------------------------ the reader */

/* Record "PATH: offset N: MESSAGE" (a format error) and return its status. */
ffnn_status ffnn_st_fail_at(const st_reader *r, uint64_t offset, const char *fmt, ...)
{
    char msg[768];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ffnn_fail(FFNN_ERR_FORMAT, "%s: offset %llu: %s", r->path,
                     (unsigned long long)offset, msg);
}

/* Record "PATH: header: MESSAGE" (a format error naming a key) and return it. */
ffnn_status ffnn_st_fail(const st_reader *r, const char *fmt, ...)
{
    char msg[768];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ffnn_fail(FFNN_ERR_FORMAT, "%s: header: %s", r->path, msg);
}

uint64_t ffnn_st_data_start(const st_reader *r) { return 8 + r->header_size; }

static ffnn_status st_open(st_reader *r)
{
    struct stat st;
    const char *kind = r->kind ? r->kind : "model file";

    r->f = fopen(r->path, "rb");
    if (!r->f)
        return ffnn_fail(FFNN_ERR_IO, "%s: cannot open the %s: %s", r->path, kind,
                         strerror(errno));
    if (fstat(fileno(r->f), &st) != 0)
        return ffnn_fail(FFNN_ERR_IO, "%s: cannot stat the %s: %s", r->path, kind,
                         strerror(errno));
    if (!S_ISREG(st.st_mode))
        return ffnn_fail(FFNN_ERR_IO, "%s: expected a regular file (a %s), found %s",
                         r->path, kind, S_ISDIR(st.st_mode) ? "a directory" : "a special file");
    r->file_size = (uint64_t)st.st_size;
    return FFNN_OK;
}

/* Read bytes [n] at offset (what: for the message). */
ffnn_status ffnn_st_read_at(st_reader *r, uint64_t offset, void *buf, size_t n,
                              const char *what)
{
    if (fseeko(r->f, (off_t)offset, SEEK_SET) != 0)
        return ffnn_fail(FFNN_ERR_IO, "%s: offset %llu: cannot seek: %s", r->path,
                         (unsigned long long)offset, strerror(errno));
    if (fread(buf, 1, n, r->f) == n)
        return FFNN_OK;
    if (ferror(r->f))
        return ffnn_fail(FFNN_ERR_IO, "%s: offset %llu: cannot read %s: %s", r->path,
                         (unsigned long long)offset, what, strerror(errno));
    return ffnn_st_fail_at(r, offset, "expected %zu bytes of %s, found end of file (did the "
                      "file change while it was read?)", n, what);
}

static uint64_t st_get_u64le(const uint8_t *b)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | b[i];
    return v;
}

/* The header length, its limits, and the header bytes. */
static ffnn_status st_read_header(st_reader *r)
{
    uint8_t len[8];
    ffnn_status st;

    if (r->file_size < 8)
        return ffnn_st_fail_at(r, r->file_size, "expected the 8-byte little-endian header length, "
                          "found end of file (the file has %llu bytes)",
                          (unsigned long long)r->file_size);
    if ((st = ffnn_st_read_at(r, 0, len, 8, "the header length")) != FFNN_OK)
        return st;
    r->header_size = st_get_u64le(len);
    if (r->header_size > ST_MAX_HEADER)
        return ffnn_st_fail_at(r, 0, "header length %llu exceeds the limit of %llu bytes (100 MB)",
                          (unsigned long long)r->header_size, ST_MAX_HEADER);
    if (r->header_size > r->file_size - 8)
        return ffnn_st_fail_at(r, 0, "header length %llu runs past the end of the file: expected "
                          "at most %llu (the file has %llu bytes)",
                          (unsigned long long)r->header_size,
                          (unsigned long long)(r->file_size - 8),
                          (unsigned long long)r->file_size);
    r->header = malloc((size_t)r->header_size + 1);
    if (!r->header)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "%s: out of memory for a %llu-byte header",
                         r->path, (unsigned long long)r->header_size);
    r->header[r->header_size] = '\0';
    return ffnn_st_read_at(r, 8, r->header, (size_t)r->header_size, "the header");
}

/* The header is UTF-8 without NUL bytes and starts with '{'. */
static ffnn_status st_check_text(const st_reader *r)
{
    const unsigned char *h = (const unsigned char *)r->header;
    size_t n = (size_t)r->header_size;

    for (size_t i = 0; i < n;) {
        size_t len = h[i] ? ffnn_utf8_length(h + i, n - i) : 0;
        if (len == 0)
            return ffnn_st_fail_at(r, 8 + i, "expected UTF-8 JSON text in the header, found %s "
                              "byte 0x%02x", h[i] ? "the invalid UTF-8" : "a NUL", h[i]);
        i += len;
    }
    if (n == 0)
        return ffnn_st_fail_at(r, 8, "expected the header to start with '{' (a JSON object), "
                          "found an empty header");
    if (h[0] != '{')
        return ffnn_st_fail_at(r, 8, "expected the header to start with '{' (a JSON object), "
                          "found byte 0x%02x ('%c')", h[0], h[0] > 32 && h[0] < 127 ? h[0] : '?');
    /* a \u0000 escape in a string: cJSON's C strings would end there, so
     * "layers.0.bias\u0000x" would pass as "layers.0.bias" */
    for (size_t i = 0, in_string = 0; i < n; i++) {
        if (h[i] == '"')
            in_string = !in_string;
        else if (in_string && h[i] == '\\') {
            if (i + 5 < n && h[i + 1] == 'u' && h[i + 2] == '0' && h[i + 3] == '0' &&
                h[i + 4] == '0' && h[i + 5] == '0')
                return ffnn_st_fail_at(r, 8 + i, "expected JSON strings without NUL, found "
                                       "the escape \\u0000 (a key or value would be cut "
                                       "there)");
            i++; /* the escaped character */
        }
    }
    return FFNN_OK;
}

/* Parse the header; only spaces (and other JSON whitespace) may follow it. */
static ffnn_status st_parse_json(st_reader *r)
{
    const char *end = NULL;
    size_t at, n = (size_t)r->header_size;

    r->root = cJSON_ParseWithLengthOpts(r->header, n, &end, 0);
    at = end ? (size_t)(end - r->header) : 0;
    if (!r->root)
        return ffnn_st_fail_at(r, 8 + at, "the header is not valid JSON (parsing stopped at "
                          "header byte %zu of %zu)", at, n);
    for (size_t i = at; i < n; i++)
        if (!strchr(" \t\r\n", r->header[i]))
            return ffnn_st_fail_at(r, 8 + i, "expected only spaces after the JSON object, which "
                              "ends at offset %zu; found byte 0x%02x", 8 + at,
                              (unsigned char)r->header[i]);
    if (!cJSON_IsObject(r->root))
        return ffnn_st_fail_at(r, 8, "expected the header to be a JSON object");
    return FFNN_OK;
}

static int st_compare_keys(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* cJSON keeps every member of an object: a key given twice is an error. */
ffnn_status ffnn_st_check_unique_keys(const st_reader *r, const cJSON *obj,
                                        const char *where)
{
    size_t n = 0, k = 0;
    const char **keys;
    ffnn_status st = FFNN_OK;

    for (const cJSON *c = obj->child; c; c = c->next)
        n++;
    if (n < 2)
        return FFNN_OK;
    keys = malloc(n * sizeof *keys);
    if (!keys)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "%s: out of memory checking %zu keys", r->path, n);
    for (const cJSON *c = obj->child; c; c = c->next)
        keys[k++] = c->string;
    qsort(keys, n, sizeof *keys, st_compare_keys);
    for (size_t i = 1; i < n && st == FFNN_OK; i++)
        if (strcmp(keys[i - 1], keys[i]) == 0)
            st = ffnn_st_fail(r, "%s: duplicate key \"%s\" (JSON keys must be unique)", where,
                         keys[i]);
    free(keys);
    return st;
}

/* ------------------------------------------------------------ tensor entries */

/* item as an exact non-negative integer (at most 2^53: cJSON stores doubles). */
static int st_uint(const cJSON *item, uint64_t *out)
{
    double v;

    if (!cJSON_IsNumber(item))
        return 0;
    v = item->valuedouble;
    if (!(v >= 0.0) || v > (double)ST_MAX_EXACT || v != (double)(uint64_t)v)
        return 0;
    *out = (uint64_t)v;
    return 1;
}

/* What item is, for messages: a number, a string in quotes, or a JSON type. */
void ffnn_st_describe(const cJSON *item, char *buf, size_t size)
{
    if (cJSON_IsNumber(item))
        snprintf(buf, size, "%.17g", item->valuedouble);
    else if (cJSON_IsString(item))
        snprintf(buf, size, "\"%.40s\"", item->valuestring);
    else
        snprintf(buf, size, "%s", cJSON_IsArray(item) ? "an array" :
                 cJSON_IsObject(item) ? "an object" : cJSON_IsNull(item) ? "null" :
                 "a boolean");
}

/* A shape array as text, e.g. "[10, 784]" (shortened when long). */
void ffnn_st_shape_text(const cJSON *shape, char *buf, size_t size)
{
    size_t used = (size_t)snprintf(buf, size, "[");
    uint64_t d;

    for (const cJSON *c = shape->child; c && used + 24 < size; c = c->next)
        used += (size_t)snprintf(buf + used, size - used, "%s%llu", c == shape->child ? "" : ", ",
                                 st_uint(c, &d) ? (unsigned long long)d : 0ull);
    snprintf(buf + used, size - used, "%s]", used + 24 < size ? "" : ", ...");
}

static ffnn_status st_parse_dtype(const st_reader *r, st_tensor *t, const cJSON *dtype)
{
    char found[64];

    if (cJSON_IsString(dtype) && (t->dtype = st_find_dtype(dtype->valuestring)) != NULL)
        return FFNN_OK;
    ffnn_st_describe(dtype, found, sizeof found);
    return ffnn_st_fail(r, "tensor \"%s\": unknown dtype %s (expected one of BOOL, U8, I8, "
                   "F8_E5M2, F8_E4M3, I16, U16, F16, BF16, I32, U32, F32, I64, U64, F64; "
                   "ffnn writes F32)", t->name, found);
}

/* The shape: an array of exact integers; *elements = their product, checked. */
static ffnn_status st_parse_shape(const st_reader *r, st_tensor *t, const cJSON *shape,
                                  uint64_t *elements)
{
    char text[160], found[64];
    uint64_t p = 1, d;

    if (!cJSON_IsArray(shape)) {
        ffnn_st_describe(shape, found, sizeof found);
        return ffnn_st_fail(r, "tensor \"%s\": expected \"shape\" to be an array of integers, "
                       "found %s", t->name, found);
    }
    t->shape = shape;
    t->zero_dim = -1;
    for (const cJSON *c = shape->child; c; c = c->next, t->rank++) {
        if (!st_uint(c, &d)) {
            ffnn_st_describe(c, found, sizeof found);
            return ffnn_st_fail(r, "tensor \"%s\": shape dimension %d: expected an integer in "
                           "[0, 2^53], found %s", t->name, t->rank, found);
        }
        if (t->rank < 2)
            t->dims[t->rank] = d;
        if (d == 0 && t->zero_dim < 0)
            t->zero_dim = t->rank;
        if (d != 0 && p > UINT64_MAX / d) {
            ffnn_st_shape_text(shape, text, sizeof text);
            return ffnn_st_fail(r, "tensor \"%s\": shape %s: the number of elements overflows "
                           "64 bits", t->name, text);
        }
        p *= d;
    }
    *elements = p;
    return FFNN_OK;
}

static ffnn_status st_parse_offsets(const st_reader *r, st_tensor *t, const cJSON *offsets)
{
    char found[64];

    if (!cJSON_IsArray(offsets) || cJSON_GetArraySize(offsets) != 2 ||
        !st_uint(offsets->child, &t->begin) || !st_uint(offsets->child->next, &t->end)) {
        ffnn_st_describe(offsets, found, sizeof found);
        return ffnn_st_fail(r, "tensor \"%s\": expected \"data_offsets\" to be [begin, end], two "
                       "integers in [0, 2^53], found %s", t->name, found);
    }
    if (t->begin > t->end)
        return ffnn_st_fail(r, "tensor \"%s\": data_offsets [%llu, %llu]: expected begin <= end",
                       t->name, (unsigned long long)t->begin, (unsigned long long)t->end);
    return FFNN_OK;
}

/* end - begin must be the shape's elements times the dtype's size. */
static ffnn_status st_check_size(const st_reader *r, const st_tensor *t, uint64_t elements)
{
    char text[160];

    ffnn_st_shape_text(t->shape, text, sizeof text);
    if (elements > UINT64_MAX / t->dtype->size)
        return ffnn_st_fail(r, "tensor \"%s\": shape %s of %s: the size in bytes overflows 64 "
                       "bits", t->name, text, t->dtype->name);
    if (t->end - t->begin != elements * t->dtype->size)
        return ffnn_st_fail(r, "tensor \"%s\": data_offsets [%llu, %llu] span %llu bytes, expected "
                       "%llu = shape %s (%llu elements) x %u bytes (%s)", t->name,
                       (unsigned long long)t->begin, (unsigned long long)t->end,
                       (unsigned long long)(t->end - t->begin),
                       (unsigned long long)(elements * t->dtype->size), text,
                       (unsigned long long)elements, t->dtype->size, t->dtype->name);
    return FFNN_OK;
}

/* One tensor entry: {"dtype": ..., "shape": [...], "data_offsets": [b, e]}. */
static ffnn_status st_parse_tensor(const st_reader *r, const cJSON *item, st_tensor *t)
{
    static const char *const keys[3] = {"dtype", "shape", "data_offsets"};
    const cJSON *field[3];
    char where[160];
    uint64_t elements = 0;
    ffnn_status st;

    t->name = item->string;
    if (!cJSON_IsObject(item))
        return ffnn_st_fail(r, "tensor \"%s\": expected an object {\"dtype\", \"shape\", "
                       "\"data_offsets\"}", t->name);
    snprintf(where, sizeof where, "tensor \"%.120s\"", t->name);
    if ((st = ffnn_st_check_unique_keys(r, item, where)) != FFNN_OK)
        return st;
    for (const cJSON *c = item->child; c; c = c->next)
        if (strcmp(c->string, keys[0]) && strcmp(c->string, keys[1]) && strcmp(c->string, keys[2]))
            return ffnn_st_fail(r, "tensor \"%s\": unknown key \"%s\" (expected dtype, shape, "
                           "data_offsets)", t->name, c->string);
    for (int k = 0; k < 3; k++)
        if (!(field[k] = cJSON_GetObjectItemCaseSensitive(item, keys[k])))
            return ffnn_st_fail(r, "tensor \"%s\": missing \"%s\"", t->name, keys[k]);
    if ((st = st_parse_dtype(r, t, field[0])) != FFNN_OK ||
        (st = st_parse_shape(r, t, field[1], &elements)) != FFNN_OK ||
        (st = st_parse_offsets(r, t, field[2])) != FFNN_OK)
        return st;
    return st_check_size(r, t, elements);
}

/* Every member of the header but "__metadata__" is a tensor. */
static ffnn_status st_collect_tensors(st_reader *r)
{
    ffnn_status st = ffnn_st_check_unique_keys(r, r->root, "top level");
    size_t n = 0;

    if (st != FFNN_OK)
        return st;
    for (const cJSON *c = r->root->child; c; c = c->next)
        n += strcmp(c->string, "__metadata__") != 0;
    r->tensors = calloc(n ? n : 1, sizeof *r->tensors);
    if (!r->tensors)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "%s: out of memory for %zu tensors", r->path, n);
    for (const cJSON *c = r->root->child; c && st == FFNN_OK; c = c->next)
        if (strcmp(c->string, "__metadata__") != 0)
            st = st_parse_tensor(r, c, &r->tensors[r->count++]);
    return st;
}

static int st_compare_offsets(const void *a, const void *b)
{
    const st_tensor *x = a, *y = b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    return (x->end > y->end) - (x->end < y->end);
}

/* Sorted by begin, each tensor starts where the previous one ends, from 0 to
 * the end of the file: no overlap, no gap, no trailing bytes. */
static ffnn_status st_check_layout(st_reader *r)
{
    uint64_t at = 0, data_size = r->file_size - ffnn_st_data_start(r);
    const char *prev = NULL;

    qsort(r->tensors, r->count, sizeof *r->tensors, st_compare_offsets);
    for (size_t i = 0; i < r->count; i++) {
        const st_tensor *t = &r->tensors[i];
        if (t->begin != at)
            return ffnn_st_fail(r, "tensor \"%s\": data_offsets [%llu, %llu] %s %s%s%s: expected "
                           "it to begin at %llu (tensors must tile the data section, in any "
                           "order, without gaps or overlaps)", t->name,
                           (unsigned long long)t->begin, (unsigned long long)t->end,
                           t->begin < at ? "overlap" : "leave a gap after",
                           prev ? "tensor \"" : "the start of the data section",
                           prev ? prev : "", prev ? "\"" : "", (unsigned long long)at);
        at = t->end;
        prev = t->name;
    }
    if (at < data_size)
        return ffnn_st_fail_at(r, ffnn_st_data_start(r) + at, "expected end of file after the %llu "
                          "bytes of tensor data, found %llu trailing bytes",
                          (unsigned long long)at, (unsigned long long)(data_size - at));
    if (at > data_size)
        return ffnn_st_fail_at(r, r->file_size, "expected %llu bytes of tensor data (up to offset "
                          "%llu), found end of file after %llu (truncated file)",
                          (unsigned long long)at, (unsigned long long)(ffnn_st_data_start(r) + at),
                          (unsigned long long)data_size);
    return FFNN_OK;
}

/* ------------------------------------------------------------ metadata */

/* The metadata values ffnn reads (pointers into the cJSON tree). */
typedef struct st_meta {
    const char *format, *arch, *loss, *version, *interrupted;
    const char *class_names; /* a JSON array of strings, as text, or NULL */
    const char *table;       /* the input encoding (data/table.h), JSON text, or NULL */
} st_meta;

/* The optional standardisation tensors (docs/FORMATS.md), stat 1-4. */
static const char *const st_stat_names[5] = {
    NULL, "standardize.input.mean", "standardize.input.scale", "standardize.target.mean",
    "standardize.target.scale"};

/* Store value under its key; unknown keys are errors. */
static ffnn_status st_meta_field(const st_reader *r, const cJSON *c, st_meta *meta)
{
    char found[64];

    if (!cJSON_IsString(c)) {
        ffnn_st_describe(c, found, sizeof found);
        return ffnn_st_fail(r, "__metadata__ \"%s\": expected a string value, found %s",
                       c->string, found);
    }
    if (strcmp(c->string, "format") == 0)
        meta->format = c->valuestring;
    else if (strcmp(c->string, "arch") == 0)
        meta->arch = c->valuestring;
    else if (strcmp(c->string, "loss") == 0)
        meta->loss = c->valuestring;
    else if (strcmp(c->string, "ffnn_version") == 0)
        meta->version = c->valuestring;
    else if (strcmp(c->string, "interrupted") == 0)
        meta->interrupted = c->valuestring;
    else if (strcmp(c->string, "class_names") == 0)
        meta->class_names = c->valuestring;
    else if (strcmp(c->string, "table") == 0)
        meta->table = c->valuestring;
    else
        return ffnn_st_fail(r, "__metadata__: unknown key \"%s\" (expected format, arch, loss, "
                       "ffnn_version, interrupted, class_names, table)", c->string);
    return FFNN_OK;
}

/* "__metadata__": format "ffnn-model", arch, loss (ce|bce|mse), optional
 * ffnn_version; *loss parsed. */
static ffnn_status st_read_metadata(const st_reader *r, st_meta *meta, ffnn_loss *loss)
{
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(r->root, "__metadata__");
    ffnn_status st;

    if (!md)
        return ffnn_st_fail(r, "missing \"__metadata__\" (an ffnn model file records format "
                       "\"" ST_FORMAT "\", arch and loss there)");
    if (!cJSON_IsObject(md))
        return ffnn_st_fail(r, "\"__metadata__\": expected an object of strings");
    if ((st = ffnn_st_check_unique_keys(r, md, "__metadata__")) != FFNN_OK)
        return st;
    const cJSON *format = cJSON_GetObjectItemCaseSensitive(md, "format");
    if (cJSON_IsString(format) && strcmp(format->valuestring, "ffnn-checkpoint") == 0)
        return ffnn_st_fail(r, "__metadata__ \"format\": expected \"" ST_FORMAT "\", found "
                            "\"ffnn-checkpoint\" (a training checkpoint: load it with "
                            "ffnn_checkpoint_load; its weights are the layers.* tensors)");
    for (const cJSON *c = md->child; c; c = c->next)
        if ((st = st_meta_field(r, c, meta)) != FFNN_OK)
            return st;
    if (!meta->format || strcmp(meta->format, ST_FORMAT) != 0)
        return ffnn_st_fail(r, "__metadata__ \"format\": expected \"" ST_FORMAT "\", found %s%.40s%s",
                       meta->format ? "\"" : "", meta->format ? meta->format : "none",
                       meta->format ? "\"" : "");
    if (!meta->arch || !meta->loss)
        return ffnn_st_fail(r, "__metadata__: missing \"%s\"", meta->arch ? "loss" : "arch");
    if (meta->version && strlen(meta->version) >= ST_VERSION_MAX)
        return ffnn_st_fail(r, "__metadata__ \"ffnn_version\": expected at most %d characters, "
                       "found %zu", ST_VERSION_MAX - 1, strlen(meta->version));
    if (meta->interrupted && strlen(meta->interrupted) >= ST_INTERRUPTED_MAX)
        return ffnn_st_fail(r, "__metadata__ \"interrupted\": expected at most %d characters, "
                       "found %zu", ST_INTERRUPTED_MAX - 1, strlen(meta->interrupted));
    if (ffnn_loss_from_name(meta->loss, loss) != FFNN_OK) {
        char context[600];
        snprintf(context, sizeof context, "%s: header: __metadata__ \"loss\"", r->path);
        return ffnn_fail_context(FFNN_ERR_FORMAT, context);
    }
    return FFNN_OK;
}

/* ------------------------------------------------------------ matching the model */

/* Layer index and kind of "layers.<i>.weight" / "layers.<i>.bias" (i in plain
 * decimal, no leading zeros); 0 when the name has another form. */
static int st_parse_name(const char *name, long *layer, int *is_bias)
{
    const char *p = name + 7;
    char *end;

    if (strncmp(name, "layers.", 7) != 0 || *p < '0' || *p > '9' || (*p == '0' && p[1] != '.'))
        return 0;
    errno = 0;
    *layer = strtol(p, &end, 10);
    if (errno || *end != '.')
        return 0;
    *is_bias = strcmp(end + 1, "bias") == 0;
    return *is_bias || strcmp(end + 1, "weight") == 0;
}

/* t has the dtype, shape and name of a tensor of m; records where it goes. */
ffnn_status ffnn_st_match_tensor(const st_reader *r, const ffnn_model *m, const char *arch,
                                   st_tensor *t, unsigned char *seen)
{
    char text[160], want[64];
    long i = 0;
    int bias = 0;

    if (!st_parse_name(t->name, &i, &bias) || i >= m->layer_count)
        return ffnn_st_fail(r, "unexpected tensor \"%s\": architecture %s has the tensors "
                       "layers.0.weight ... layers.%d.weight and their biases", t->name,
                       arch, m->layer_count - 1);
    const ffnn_layer *l = &m->layers[i];
    if (bias && !l->has_bias)
        return ffnn_st_fail(r, "unexpected tensor \"%s\": layer %ld has no bias in architecture "
                       "%s (':nobias')", t->name, i, arch);
    if (strcmp(t->dtype->name, "F32") != 0)
        return ffnn_st_fail(r, "tensor \"%s\": dtype %s, expected F32 (ffnn's parameters are "
                       "float32)", t->name, t->dtype->name);
    ffnn_st_shape_text(t->shape, text, sizeof text);
    if (t->zero_dim >= 0)
        return ffnn_st_fail(r, "tensor \"%s\": shape %s has a zero dimension (dimension %d); a "
                       "layer's weight and bias have none", t->name, text, t->zero_dim);
    if (bias)
        snprintf(want, sizeof want, "[%zu]", l->out);
    else
        snprintf(want, sizeof want, "[%zu, %zu]", l->out, l->fan_in);
    if (bias ? t->rank != 1 || t->dims[0] != l->out
             : t->rank != 2 || t->dims[0] != l->out || t->dims[1] != l->fan_in)
        return ffnn_st_fail(r, "tensor \"%s\": shape %s, expected %s for layer %ld of "
                       "architecture %s (%s)", t->name, text, want, i, arch,
                       l->kind == FFNN_LAYER_LOCAL1D ? "local1d: weight [out, R], bias [out]"
                                                     : "weight [out, in], bias [out]");
    t->param_offset = bias ? l->bias_offset : l->weight_offset;
    seen[2 * i + bias] = 1;
    return FFNN_OK;
}

/* The file's tensors are exactly those of m: none extra, none missing. */
static ffnn_status st_match_model(const st_reader *r, const ffnn_model *m)
{
    size_t arch_size = ffnn_arch_format_size(m->layer_count);
    char *arch = malloc(arch_size);
    unsigned char *seen = calloc(2 * (size_t)m->layer_count, 1);
    ffnn_status st = FFNN_OK;

    if (!seen || !arch) {
        free(seen);
        free(arch);
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "%s: out of memory", r->path);
    }
    ffnn_model_arch_string(m, arch, arch_size);
    int stats = 0; /* bit s: standardize tensor s seen */
    for (size_t k = 0; k < r->count && st == FFNN_OK; k++) {
        st_tensor *t = &r->tensors[k];
        t->stat = 0;
        for (int s = 1; s <= 4; s++)
            if (strcmp(t->name, st_stat_names[s]) == 0)
                t->stat = s;
        if (!t->stat) {
            st = ffnn_st_match_tensor(r, m, arch, t, seen);
            continue;
        }
        size_t want = t->stat <= 2 ? m->input_size : m->layers[m->layer_count - 1].out;
        if (strcmp(t->dtype->name, "F32") != 0 || t->rank != 1 || t->dims[0] != want)
            st = ffnn_st_fail(r, "tensor \"%s\": expected F32 of shape [%zu] (the model's %s), "
                              "found %s of rank %d", t->name, want,
                              t->stat <= 2 ? "inputs" : "outputs", t->dtype->name, t->rank);
        stats |= 1 << t->stat;
    }
    for (int s = 1; s <= 3 && st == FFNN_OK; s += 2) /* a mean needs its scale and back */
        if (!(stats >> s & 1) != !(stats >> (s + 1) & 1))
            st = ffnn_st_fail(r, "tensor \"%s\" without \"%s\" (a standardisation needs "
                              "both)", st_stat_names[stats >> s & 1 ? s : s + 1],
                              st_stat_names[stats >> s & 1 ? s + 1 : s]);
    for (int i = 0; i < m->layer_count && st == FFNN_OK; i++) {
        if (!seen[2 * i])
            st = ffnn_st_fail(r, "missing tensor \"layers.%d.weight\" (architecture %s)", i, arch);
        else if (m->layers[i].has_bias && !seen[2 * i + 1])
            st = ffnn_st_fail(r, "missing tensor \"layers.%d.bias\" (architecture %s)", i, arch);
    }
    free(seen);
    free(arch);
    return st;
}

/* ------------------------------------------------------------ data */

/* Decode little-endian float32 in place: bytes [4 n] -> v [n]; the index of
 * the first non-finite value, or n. */
size_t ffnn_st_decode_f32(float *v, size_t n)
{
    size_t bad = n;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *b = (const uint8_t *)(v + i);
        uint32_t u = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
                     (uint32_t)b[3] << 24;
        memcpy(v + i, &u, 4);
        if (bad == n && !isfinite(v[i]))
            bad = i;
    }
    return bad;
}

/* Every tensor's data into the model's arena; NaN and Inf are refused. */
static ffnn_status st_read_data(st_reader *r, ffnn_model *m)
{
    char what[160];
    ffnn_status st;

    size_t in = m->input_size, out = m->layers[m->layer_count - 1].out;
    float *stat = calloc(2 * in + 2 * out, sizeof *stat); /* the standardize tensors */
    float *stat_at[5] = {NULL, stat, stat + in, stat + 2 * in, stat + 2 * in + out};
    int have[5] = {0, 0, 0, 0, 0};
    if (!stat)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "%s: out of memory", r->path);
    st = FFNN_OK;
    for (size_t k = 0; k < r->count && st == FFNN_OK; k++) {
        const st_tensor *t = &r->tensors[k];
        float *dst = t->stat ? stat_at[t->stat] : m->params + t->param_offset; /* [n] */
        size_t n = (size_t)((t->end - t->begin) / 4), bad;
        uint64_t at = ffnn_st_data_start(r) + t->begin;
        snprintf(what, sizeof what, "tensor \"%.120s\"", t->name);
        if ((st = ffnn_st_read_at(r, at, dst, n * 4, what)) != FFNN_OK)
            break;
        if ((bad = ffnn_st_decode_f32(dst, n)) < n)
            st = ffnn_st_fail_at(r, at + 4 * bad, "tensor \"%s\" element %zu is %g: expected a "
                                 "finite number", t->name, bad, (double)dst[bad]);
        for (size_t j = 0; st == FFNN_OK && (t->stat == 2 || t->stat == 4) && j < n; j++)
            if (!(dst[j] > 0.0f))
                st = ffnn_st_fail_at(r, at + 4 * j, "tensor \"%s\" element %zu is %g: "
                                     "expected a positive scale", t->name, j, (double)dst[j]);
        have[t->stat] = 1;
    }
    if (st == FFNN_OK && (have[1] || have[3]))
        st = ffnn_model_set_standardization(m, have[1] ? stat_at[1] : NULL,
                                            have[1] ? stat_at[2] : NULL,
                                            have[3] ? stat_at[3] : NULL,
                                            have[3] ? stat_at[4] : NULL);
    free(stat);
    return st;
}

/* ------------------------------------------------------------ loading */

void ffnn_st_close(st_reader *r)
{
    if (r->f)
        fclose(r->f);
    cJSON_Delete(r->root);
    free(r->header);
    free(r->tensors);
}

/* Everything the safetensors format itself requires. */
ffnn_status ffnn_st_read_layout(st_reader *r)
{
    ffnn_status st = st_open(r);

    if (st == FFNN_OK)
        st = st_read_header(r);
    if (st == FFNN_OK)
        st = st_check_text(r);
    if (st == FFNN_OK)
        st = st_parse_json(r);
    if (st == FFNN_OK)
        st = st_collect_tensors(r);
    if (st == FFNN_OK)
        st = st_check_layout(r);
    return st;
}

/* The loss must fit the last layer (ffnn_model_check_loss, the rule that
 * ffnn_model_save, ffnn_trainer_create and ffnn_model_predict apply too). */
static ffnn_status st_check_loss(const st_reader *r, const ffnn_model *m, ffnn_loss loss)
{
    if (ffnn_model_check_loss(m, loss) == FFNN_OK)
        return FFNN_OK;
    char why[512];
    snprintf(why, sizeof why, "%s", ffnn_last_error());
    return ffnn_st_fail(r, "__metadata__: %s", why);
}

/* __metadata__ "class_names": a JSON array of ffnn_model_class_count(m) distinct
 * strings, as text. */
static ffnn_status st_read_class_names(const st_reader *r, const char *text, ffnn_model *m)
{
    cJSON *a = cJSON_Parse(text);
    size_t out = m->layers[m->layer_count - 1].out;
    int classes = out == 1 ? 2 : (int)out; /* ffnn_model_class_count */
    int n = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : -1;
    const char **names = n == classes ? calloc((size_t)n, sizeof *names) : NULL;
    ffnn_status st = FFNN_OK;
    if (n != classes)
        st = ffnn_st_fail(r, "__metadata__ \"class_names\": expected a JSON array of %d "
                          "strings (the model's classes), found %s", classes,
                          n < 0 ? "something else" : "another count");
    else if (!names)
        st = ffnn_fail(FFNN_ERR_NO_MEMORY, "%s: out of memory", r->path);
    int i = 0;
    for (const cJSON *c = a ? a->child : NULL; st == FFNN_OK && c; c = c->next, i++) {
        if (!cJSON_IsString(c))
            st = ffnn_st_fail(r, "__metadata__ \"class_names\": element %d is not a string", i);
        else
            names[i] = c->valuestring;
        for (int k = 0; st == FFNN_OK && k < i; k++)
            if (strcmp(names[k], names[i]) == 0)
                st = ffnn_st_fail(r, "__metadata__ \"class_names\": elements %d and %d are "
                                  "the same", k, i);
    }
    if (st == FFNN_OK)
        st = ffnn_model_set_class_names(m, names, classes);
    free(names);
    cJSON_Delete(a);
    return st;
}

/* __metadata__ "table": a fitted table encoding (data/table.h) whose width is
 * the model's input size. */
static ffnn_status st_read_table(const st_reader *r, const char *text, ffnn_model *m)
{
    ffnn_table *t = NULL;
    ffnn_status st = ffnn_table_from_json(text, &t);
    if (st != FFNN_OK) {
        char why[512];
        snprintf(why, sizeof why, "%s", ffnn_last_error());
        return ffnn_st_fail(r, "__metadata__ \"table\": %s", why);
    }
    size_t width = t->width;
    ffnn_table_free(t);
    if (width != m->input_size)
        return ffnn_st_fail(r, "__metadata__ \"table\": encodes %zu inputs, expected %zu (the "
                            "model's)", width, m->input_size);
    return ffnn_model_set_table_json(m, text);
}

/* The model of the metadata, matched against the tensors, then filled in. */
static ffnn_status st_build_model(st_reader *r, ffnn_model **out, ffnn_model_file_info *info)
{
    st_meta meta = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    ffnn_status st = st_read_metadata(r, &meta, &info->loss);
    char context[600];

    if (st != FFNN_OK)
        return st;
    snprintf(info->ffnn_version, sizeof info->ffnn_version, "%s",
             meta.version ? meta.version : "");
    snprintf(info->interrupted, sizeof info->interrupted, "%s",
             meta.interrupted ? meta.interrupted : "");
    if (ffnn_model_create_layout(meta.arch, out) != FFNN_OK) {
        snprintf(context, sizeof context, "%s: header: __metadata__ \"arch\"", r->path);
        return ffnn_fail_context(FFNN_ERR_FORMAT, context);
    }
    /* the tensors tile the file's data section: matched, the parameters are
     * bounded by the file's size before they are allocated */
    if ((st = st_match_model(r, *out)) != FFNN_OK ||
        (meta.class_names && (st = st_read_class_names(r, meta.class_names, *out)) != FFNN_OK))
        return st;
    if ((st = st_check_loss(r, *out, info->loss)) != FFNN_OK ||
        (meta.table && (st = st_read_table(r, meta.table, *out)) != FFNN_OK))
        return st;
    (*out)->loss = info->loss; /* the model remembers how its outputs are read */
    (*out)->has_loss = 1;
    if ((st = ffnn_model_alloc_params(*out)) != FFNN_OK)
        return ffnn_fail_context_at(st, r->path, "");
    return st_read_data(r, *out);
}

ffnn_status ffnn_model_load(const char *path, ffnn_model **out, ffnn_model_file_info *info)
{
    st_reader r;
    ffnn_model *m = NULL;
    ffnn_model_file_info meta;
    ffnn_status st;

    if (!path || !out)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_model_load: NULL argument");
    memset(&r, 0, sizeof r);
    memset(&meta, 0, sizeof meta);
    r.path = path;
    st = ffnn_st_read_layout(&r);
    if (st == FFNN_OK)
        st = st_build_model(&r, &m, &meta);
    ffnn_st_close(&r);
    if (st != FFNN_OK) {
        ffnn_model_free(m);
        return st;
    }
    *out = m;
    if (info)
        *info = meta;
    return FFNN_OK;
}

/* ------------------------------------------------------------ saving */

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

/* The model's standardize tensor s (1-4, st_stat_names), or NULL. */
static const float *st_stat(const ffnn_model *m, int s)
{
    const float *v[5] = {NULL, m->input_mean, m->input_scale, m->target_mean, m->target_scale};
    return v[s];
}

/* Write n floats as little-endian float32, ST_CHUNK at a time. */
static ffnn_status st_write_f32(ffnn_atomic_file *af, const float *v, size_t count)
{
    uint8_t buf[4 * ST_CHUNK];
    ffnn_status st;
    for (size_t first = 0; first < count; first += ST_CHUNK) {
        size_t n = count - first < ST_CHUNK ? count - first : ST_CHUNK;
        for (size_t k = 0; k < n; k++) {
            uint32_t u;
            memcpy(&u, v + first + k, 4);
            for (int b = 0; b < 4; b++)
                buf[4 * k + (size_t)b] = (uint8_t)(u >> (8 * b));
        }
        if ((st = ffnn_atomic_file_write(af, buf, 4 * n)) != FFNN_OK)
            return st;
    }
    return FFNN_OK;
}

/* __metadata__ and one entry per tensor, in arena order; 0 when out of memory. */
static int st_fill_header(cJSON *root, const ffnn_model *m, const char *arch, ffnn_loss loss,
                          const char *interrupted)
{
    cJSON *md = cJSON_AddObjectToObject(root, "__metadata__");
    char name[64];

    if (!md || !cJSON_AddStringToObject(md, "format", ST_FORMAT) ||
        !cJSON_AddStringToObject(md, "arch", arch) ||
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
    for (int i = 0; i < m->layer_count; i++) {
        const ffnn_layer *l = &m->layers[i];
        double dims[2] = {(double)l->out, (double)l->fan_in};
        snprintf(name, sizeof name, "layers.%d.weight", i);
        if (!st_add_tensor(root, name, dims, 2, l->weight_offset, l->out * l->fan_in))
            return 0;
        snprintf(name, sizeof name, "layers.%d.bias", i);
        if (l->has_bias && !st_add_tensor(root, name, dims, 1, l->bias_offset, l->out))
            return 0;
    }
    size_t at = m->parameter_count; /* the standardisation after the arena */
    for (int s = 1; s <= 4; s++) {
        const float *v = st_stat(m, s);
        double n = (double)(s <= 2 ? m->input_size : m->layers[m->layer_count - 1].out);
        if (v && !st_add_tensor(root, st_stat_names[s], &n, 1, at, (size_t)n))
            return 0;
        at += v ? (size_t)n : 0;
    }
    return 1;
}

/* The header text padded with spaces to a multiple of 8 bytes (so that the data
 * section is 8-byte aligned); *text malloc'd. */
static ffnn_status st_build_header(const ffnn_model *m, ffnn_loss loss, const char *interrupted,
                                   char **text, size_t *size)
{
    size_t arch_size = ffnn_arch_format_size(m->layer_count);
    char *arch = malloc(arch_size), *json = NULL;
    cJSON *root = cJSON_CreateObject();

    if (arch && root) {
        ffnn_model_arch_string(m, arch, arch_size);
        if (st_fill_header(root, m, arch, loss, interrupted))
            json = cJSON_PrintUnformatted(root);
    }
    cJSON_Delete(root);
    free(arch);
    if (!json)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory building a model file header");
    return ffnn_st_pad_header(json, text, size);
}

ffnn_status ffnn_st_pad_header(char *json, char **text, size_t *size)
{
    const size_t n = strlen(json);
    *size = (n + 7) / 8 * 8;
    *text = malloc(*size);
    if (*text) {
        memcpy(*text, json, n);
        memset(*text + n, ' ', *size - n);
    }
    cJSON_free(json);
    return *text ? FFNN_OK : ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
}

typedef struct st_writer {
    const ffnn_model *m;
    const char *header; /* [header_size] */
    size_t header_size;
} st_writer;

/* Length, header, then the parameter arena as little-endian float32. */
static ffnn_status st_fill(ffnn_atomic_file *af, void *user)
{
    const st_writer *w = user;
    uint8_t buf[8];
    ffnn_status st;

    for (int i = 0; i < 8; i++)
        buf[i] = (uint8_t)((uint64_t)w->header_size >> (8 * i));
    if ((st = ffnn_atomic_file_write(af, buf, 8)) != FFNN_OK ||
        (st = ffnn_atomic_file_write(af, w->header, w->header_size)) != FFNN_OK)
        return st;
    if ((st = st_write_f32(af, w->m->params, w->m->parameter_count)) != FFNN_OK)
        return st;
    for (int s = 1; s <= 4; s++) {
        size_t n = s <= 2 ? w->m->input_size : w->m->layers[w->m->layer_count - 1].out;
        if (st_stat(w->m, s) && (st = st_write_f32(af, st_stat(w->m, s), n)) != FFNN_OK)
            return st;
    }
    return FFNN_OK;
}

/* Refuse NaN and Inf parameters, naming the tensor and element. */
static ffnn_status st_check_finite(const ffnn_model *m, const char *path)
{
    for (int i = 0; i < m->layer_count; i++) {
        const ffnn_layer *l = &m->layers[i];
        for (int bias = 0; bias <= l->has_bias; bias++) {
            const float *v = m->params + (bias ? l->bias_offset : l->weight_offset);
            size_t n = bias ? l->out : l->out * l->fan_in;
            for (size_t k = 0; k < n; k++)
                if (!isfinite(v[k]))
                    return ffnn_fail(FFNN_ERR_NUMERIC, "%s: not saved: tensor "
                                     "\"layers.%d.%s\" element %zu is %g", path, i,
                                     bias ? "bias" : "weight", k, (double)v[k]);
        }
    }
    return FFNN_OK;
}

ffnn_status ffnn_model_save(const ffnn_model *m, const char *path, ffnn_loss loss)
{
    return ffnn_model_save_interrupted(m, path, loss, NULL);
}

ffnn_status ffnn_model_save_interrupted(const ffnn_model *m, const char *path, ffnn_loss loss,
                                        const char *interrupted)
{
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
    if ((st = ffnn_model_check_loss(m, loss)) != FFNN_OK) /* what the reader would refuse */
        return ffnn_fail_context_at(st, path, ": not saved");
    if ((st = st_check_finite(m, path)) != FFNN_OK ||
        (st = st_build_header(m, loss, interrupted, &header, &w.header_size)) != FFNN_OK)
        return st;
    w.header = header;
    st = ffnn_atomic_write(path, st_fill, &w);
    free(header);
    return st;
}
