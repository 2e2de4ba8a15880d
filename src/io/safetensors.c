/*
 * safetensors.c - the safetensors format (io/safetensors.h; format:
 * https://github.com/huggingface/safetensors, docs/FORMATS.md), shared by model
 * files (model_load.c, model_save.c) and checkpoints (checkpoint.c):
 *
 *   [8 bytes]   N, the header length: uint64, little-endian
 *   [N bytes]   the header: a UTF-8 JSON object, padded with spaces
 *   [the rest]  the data section: every tensor's bytes, little-endian
 *
 * The header maps each tensor name to {"dtype", "shape", "data_offsets":
 * [begin, end]} (byte offsets into the data section) and "__metadata__" to an
 * object of strings.
 *
 * The reader checks, in this order, what the reference reader checks (header
 * length limit and bounds, UTF-8, a JSON object, offsets that tile the data
 * section exactly, size = shape x dtype size without overflow) plus unique
 * keys and known dtypes; what a file must hold beyond the format is its
 * user's to check.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "io/safetensors.h"

#define ST_MAX_HEADER 100000000ull          /* the reference reader's limit: 100 MB */
#define ST_MAX_EXACT ((uint64_t)1 << 53)    /* JSON numbers reach cJSON as doubles  */

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

ffnn_status ffnn_st_metadata_object(const st_reader *r, const char *records, const cJSON **md)
{
    *md = cJSON_GetObjectItemCaseSensitive(r->root, "__metadata__");
    if (!*md)
        return ffnn_st_fail(r, "missing \"__metadata__\" (%s)", records);
    if (!cJSON_IsObject(*md))
        return ffnn_st_fail(r, "\"__metadata__\": expected an object of strings");
    return ffnn_st_check_unique_keys(r, *md, "__metadata__");
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

/* ------------------------------------------------------------ the reader's entry */

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
    ffnn_status st;
    if ((st = st_open(r)) != FFNN_OK || (st = st_read_header(r)) != FFNN_OK ||
        (st = st_check_text(r)) != FFNN_OK || (st = st_parse_json(r)) != FFNN_OK ||
        (st = st_collect_tensors(r)) != FFNN_OK)
        return st;
    return st_check_layout(r);
}

/* ------------------------------------------------------------ writing */

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

ffnn_status ffnn_st_build_header(const ffnn_model *m, ffnn_st_fill_fn fill, const void *ctx,
                                 const char *what, char **text, size_t *size)
{
    size_t arch_size = ffnn_model_arch_string(m, NULL, 0) + 1; /* ensembles: longer */
    char *arch = malloc(arch_size), *json = NULL;
    cJSON *root = cJSON_CreateObject();

    if (arch && root) {
        ffnn_model_arch_string(m, arch, arch_size);
        if (fill(root, arch, ctx))
            json = cJSON_PrintUnformatted(root);
    }
    cJSON_Delete(root);
    free(arch);
    if (!json)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory building %s", what);
    return ffnn_st_pad_header(json, text, size);
}

ffnn_status ffnn_st_write_start(ffnn_atomic_file *af, const char *header, size_t header_size)
{
    uint8_t len[8];
    for (int i = 0; i < 8; i++)
        len[i] = (uint8_t)((uint64_t)header_size >> (8 * i));
    ffnn_status st = ffnn_atomic_file_write(af, len, 8);
    return st != FFNN_OK ? st : ffnn_atomic_file_write(af, header, header_size);
}

enum { FFNN_ST_WRITE_CHUNK = 4096 }; /* floats per conversion buffer */

ffnn_status ffnn_st_write_f32(ffnn_atomic_file *af, const float *v, size_t count)
{
    uint8_t buf[4 * FFNN_ST_WRITE_CHUNK];
    for (size_t first = 0; first < count; first += FFNN_ST_WRITE_CHUNK) {
        size_t n = count - first < FFNN_ST_WRITE_CHUNK ? count - first : FFNN_ST_WRITE_CHUNK;
        for (size_t k = 0; k < n; k++) {
            uint32_t u;
            memcpy(&u, v + first + k, 4);
            for (int b = 0; b < 4; b++)
                buf[4 * k + (size_t)b] = (uint8_t)(u >> (8 * b));
        }
        ffnn_status st = ffnn_atomic_file_write(af, buf, 4 * n);
        if (st != FFNN_OK)
            return st;
    }
    return FFNN_OK;
}
