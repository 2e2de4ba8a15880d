/*
 * train_options.c - the descriptor table of ffnn_train_config's options, one row
 * per line of train_options.def, and what runs over it: lookup
 * (ffnn_train_option_at/_find, ffnn_train_config_limit), the text form of a value
 * (ffnn_train_config_set/_get, the checkpoint keys), the defaults
 * (ffnn_train_config_default) and the range check (ffnn_train_options_check).
 * In the core layer: io/checkpoint.c reads and writes options through it, and
 * the checkpoint reader fills what an older file does not record from the
 * defaults.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/train_options.h"

_Static_assert(sizeof(ffnn_loss) == sizeof(int) && sizeof(ffnn_optimizer) == sizeof(int) &&
                   sizeof(ffnn_lr_schedule) == sizeof(int) && sizeof(ffnn_device) == sizeof(int),
               "ENUM options are stored as int");

/* ------------------------------------------------------------ the enums */

/* An enum kind's name functions, over int. */
typedef struct enum_kind {
    ffnn_status (*from_name)(const char *name, int *out);
    const char *(*name)(int v);
} enum_kind;

#define ENUM_KIND(kind)                                                                    \
    static ffnn_status from_##kind(const char *s, int *out)                                \
    {                                                                                      \
        ffnn_##kind v;                                                                     \
        ffnn_status st = ffnn_##kind##_from_name(s, &v);                                   \
        *out = (int)v;                                                                     \
        return st;                                                                         \
    }                                                                                      \
    static const char *name_##kind(int v) { return ffnn_##kind##_name((ffnn_##kind)v); }   \
    static const enum_kind enum_##kind = {from_##kind, name_##kind};
ENUM_KIND(loss)
ENUM_KIND(device)
ENUM_KIND(strategy)
ENUM_KIND(precision)
ENUM_KIND(optimizer)
ENUM_KIND(lr_schedule)

/* ------------------------------------------------------------ the table */

typedef struct option_row {
    ffnn_train_option d;     /* what ffnn_train_option_at gives */
    const enum_kind *kind;   /* ENUM: its names                  */
} option_row;

#define OFFSET_PUBLIC(name) offsetof(ffnn_train_config, name)
#define OFFSET_HIDDEN_0(name) (offsetof(ffnn_train_config, reserved) + 0 * sizeof(int))
#define OFFSET_HIDDEN_1(name) (offsetof(ffnn_train_config, reserved) + 1 * sizeof(int))
#define SIZE_PUBLIC(name) sizeof(((ffnn_train_config *)0)->name)
#define SIZE_HIDDEN_0(name) sizeof(int)
#define SIZE_HIDDEN_1(name) sizeof(int)
#define HIDDEN_PUBLIC 0
#define HIDDEN_HIDDEN_0 1
#define HIDDEN_HIDDEN_1 1
#define COUNT_NAME_INT_LIST(aux) #aux
#define COUNT_OFFSET_INT_LIST(aux) offsetof(ffnn_train_config, aux)
#define KIND_ENUM(aux) &enum_##aux
#define NO_AUX(aux) 0
#define COUNT_NAME_INT(aux) NULL
#define COUNT_NAME_SIZE(aux) NULL
#define COUNT_NAME_U64(aux) NULL
#define COUNT_NAME_FLOAT(aux) NULL
#define COUNT_NAME_BOOL(aux) NULL
#define COUNT_NAME_ENUM(aux) NULL
#define COUNT_OFFSET_INT(aux) 0
#define COUNT_OFFSET_SIZE(aux) 0
#define COUNT_OFFSET_U64(aux) 0
#define COUNT_OFFSET_FLOAT(aux) 0
#define COUNT_OFFSET_BOOL(aux) 0
#define COUNT_OFFSET_ENUM(aux) 0
#define KIND_INT(aux) NULL
#define KIND_SIZE(aux) NULL
#define KIND_U64(aux) NULL
#define KIND_FLOAT(aux) NULL
#define KIND_BOOL(aux) NULL
#define KIND_INT_LIST(aux) NULL
#define CK_NONE NULL, FFNN_CK_NONE
#define CK_ALWAYS(key) key, FFNN_CK_ALWAYS
#define CK_OPTIONAL(key) key, FFNN_CK_OPTIONAL
#define CK_MOMENTUM(key) key, FFNN_CK_MOMENTUM
#define CK_ADAM(key) key, FFNN_CK_ADAM
#define MATCH 1
#define FREE 0

static const option_row rows[] = {
#define OPTION(name, type, aux, where, def, lo, hi, lo_open, hi_open, ck, resume, cli, help) \
    {{#name, FFNN_OPTION_##type, OFFSET_##where(name), SIZE_##where(name),                  \
      COUNT_NAME_##type(aux), COUNT_OFFSET_##type(aux), HIDDEN_##where, (double)(def),       \
      {#name, (double)(lo), (double)(hi), lo_open, hi_open}, ck, resume, cli, help},         \
     KIND_##type(aux)},
#include "core/train_options.def"
#undef OPTION
};
enum { ROW_COUNT = sizeof rows / sizeof rows[0] };

/* The accessors of train_options.h read the reserved ints these rows name. */
_Static_assert(OFFSET_HIDDEN_1(x) < offsetof(ffnn_train_config, reserved) +
                                        sizeof(((ffnn_train_config *)0)->reserved),
               "the hidden options fit in ffnn_train_config.reserved");

size_t ffnn_train_option_count(void)
{
    return ROW_COUNT;
}

const ffnn_train_option *ffnn_train_option_at(size_t i)
{
    return i < ROW_COUNT ? &rows[i].d : NULL;
}

static const option_row *find_row(const char *name)
{
    for (size_t i = 0; name && i < ROW_COUNT; i++)
        if (strcmp(rows[i].d.name, name) == 0)
            return &rows[i];
    return NULL;
}

const ffnn_train_option *ffnn_train_option_find(const char *name)
{
    const option_row *r = find_row(name);
    return r ? &r->d : NULL;
}

/* The row of descriptor o (one of the table's). */
static const option_row *row_of(const ffnn_train_option *o)
{
    return (const option_row *)(const void *)o; /* d is the row's first member */
}

const ffnn_config_limit *ffnn_train_config_limit(const char *field)
{
    if (field && strcmp(field, "lr_milestone") == 0) /* each milestone (the former name) */
        field = "lr_milestones";
    const option_row *r = find_row(field);
    return r && r->d.type != FFNN_OPTION_ENUM && r->d.type != FFNN_OPTION_BOOL ? &r->d.limit
                                                                              : NULL;
}

/* ------------------------------------------------------------ values */

#define AT(c, off) ((char *)(c) + (off))
#define AT_CONST(c, off) ((const char *)(c) + (off))

double ffnn_option_value(const ffnn_train_config *c, const ffnn_train_option *o)
{
    const char *p = AT_CONST(c, o->type == FFNN_OPTION_INT_LIST ? o->count_offset : o->offset);
    int i;
    size_t z;
    uint64_t u;
    float f;
    switch (o->type) {
    case FFNN_OPTION_SIZE: memcpy(&z, p, sizeof z); return (double)z;
    case FFNN_OPTION_U64: memcpy(&u, p, sizeof u); return (double)u;
    case FFNN_OPTION_FLOAT: memcpy(&f, p, sizeof f); return (double)f;
    default: memcpy(&i, p, sizeof i); return (double)i;
    }
}

int ffnn_option_equal(const ffnn_train_config *a, const ffnn_train_config *b,
                      const ffnn_train_option *o)
{
    if (o->type == FFNN_OPTION_U64 || o->type == FFNN_OPTION_SIZE)
        return memcmp(AT_CONST(a, o->offset), AT_CONST(b, o->offset), o->size) == 0;
    if (o->type == FFNN_OPTION_BOOL) /* any non-zero is on */
        return !ffnn_option_value(a, o) == !ffnn_option_value(b, o);
    if (ffnn_option_value(a, o) != ffnn_option_value(b, o))
        return 0;
    if (o->type != FFNN_OPTION_INT_LIST)
        return 1;
    int n = (int)ffnn_option_value(a, o);
    n = n < 0 ? 0 : n > (int)(o->size / sizeof(int)) ? (int)(o->size / sizeof(int)) : n;
    return memcmp(AT_CONST(a, o->offset), AT_CONST(b, o->offset), (size_t)n * sizeof(int)) == 0;
}

int ffnn_option_is_default(const ffnn_train_config *c, const ffnn_train_option *o)
{
    const ffnn_train_config d = ffnn_train_config_default();
    return ffnn_option_equal(c, &d, o);
}

/* The shortest decimal that reads back as f (strtof), e.g. 0.01f -> "0.01". */
static void float_text(float f, char *buf, size_t size)
{
    for (int digits = 1; digits <= 9; digits++) {
        snprintf(buf, size, "%.*g", digits, (double)f);
        if (strtof(buf, NULL) == f)
            return;
    }
}

int ffnn_option_format(const ffnn_train_config *c, const ffnn_train_option *o, char *buf,
                       size_t size)
{
    const char *p = AT_CONST(c, o->offset);
    char text[FFNN_OPTION_LIST_TEXT_MAX] = "";
    uint64_t u = 0;
    size_t z = 0;
    switch (o->type) {
    case FFNN_OPTION_SIZE:
        memcpy(&z, p, sizeof z);
        snprintf(text, sizeof text, "%zu", z);
        break;
    case FFNN_OPTION_U64:
        memcpy(&u, p, sizeof u);
        snprintf(text, sizeof text, "%llu", (unsigned long long)u);
        break;
    case FFNN_OPTION_FLOAT: float_text((float)ffnn_option_value(c, o), text, sizeof text); break;
    case FFNN_OPTION_BOOL: snprintf(text, sizeof text, "%s", ffnn_option_value(c, o) ? "true" : "false"); break;
    case FFNN_OPTION_ENUM: {
        const char *name = row_of(o)->kind->name((int)ffnn_option_value(c, o));
        snprintf(text, sizeof text, "%s", name ? name : "?");
        break;
    }
    case FFNN_OPTION_INT_LIST: {
        const int *v = (const int *)(const void *)p;
        const int n = (int)ffnn_option_value(c, o), max = (int)(o->size / sizeof(int));
        for (int i = 0; i < n && i < max; i++)
            snprintf(text + strlen(text), sizeof text - strlen(text), "%s%d", i ? "," : "", v[i]);
        break;
    }
    case FFNN_OPTION_INT: snprintf(text, sizeof text, "%d", (int)ffnn_option_value(c, o)); break;
    }
    if (strlen(text) >= size)
        return 0;
    memcpy(buf, text, strlen(text) + 1);
    return 1;
}

/* "[MIN, MAX]" of limit l (brackets as the bounds; integers in full). */
static void range_text(const ffnn_config_limit *l, char *buf, size_t size)
{
    snprintf(buf, size, "%c%.17g, %.17g%c", l->min_open ? '(' : '[', l->min, l->max,
             l->max_open ? ')' : ']');
}

static int within(const ffnn_config_limit *l, double v)
{
    if (!(v == v)) /* NaN */
        return 0;
    return (l->min_open ? v > l->min : v >= l->min) && (l->max_open ? v < l->max : v <= l->max);
}

/* text, a whole decimal integer, into *v; 0 when it is not one. */
static int parse_integer(const char *text, int is_unsigned, double *v, uint64_t *u)
{
    char *end = NULL;
    errno = 0;
    if (is_unsigned) {
        if (strchr(text, '-'))
            return 0;
        *u = strtoull(text, &end, 10);
        *v = (double)*u;
    } else {
        long long x = strtoll(text, &end, 10);
        *v = (double)x;
        *u = (uint64_t)x;
    }
    return !errno && end != text && *end == '\0';
}

/* The list "a,b,c" into v [max]: increasing integers inside l; the count, or -1. */
static int parse_list(const char *text, const ffnn_config_limit *l, int *v, int max)
{
    int n = 0;
    if (!*text)
        return 0;
    for (const char *p = text; n < max; n++) {
        char *end = NULL;
        errno = 0;
        long e = strtol(p, &end, 10);
        if (errno || end == p || !within(l, (double)e) || (n && e <= v[n - 1]) ||
            (*end && *end != ','))
            return -1;
        v[n] = (int)e;
        if (!*end)
            return n + 1;
        p = end + 1;
    }
    return -1;
}

ffnn_status ffnn_option_parse(ffnn_train_config *c, const ffnn_train_option *o,
                              const char *text)
{
    char range[96];
    const char *p = text;
    double v = 0;
    uint64_t u = 0;
    range_text(&o->limit, range, sizeof range);
    switch (o->type) {
    case FFNN_OPTION_ENUM: {
        int e = 0;
        if (row_of(o)->kind->from_name(text, &e) != FFNN_OK)
            return FFNN_ERR_INVALID_ARGUMENT; /* its message names the kind and the names */
        memcpy(AT(c, o->offset), &e, sizeof e);
        return FFNN_OK;
    }
    case FFNN_OPTION_BOOL: {
        int b = !strcmp(p, "true") || !strcmp(p, "1");
        if (!b && strcmp(p, "false") && strcmp(p, "0"))
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "%s: expected true or false (1 or 0), "
                             "found '%.40s'", o->name, text);
        memcpy(AT(c, o->offset), &b, sizeof b);
        return FFNN_OK;
    }
    case FFNN_OPTION_INT_LIST: {
        int list[FFNN_LR_MILESTONES_MAX];
        const int max = (int)(o->size / sizeof(int));
        int n = parse_list(text, &o->limit, list, max < FFNN_LR_MILESTONES_MAX ? max
                                                             : FFNN_LR_MILESTONES_MAX);
        if (n < 0)
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "%s: expected 0 to %d increasing "
                             "integers in %s joined by ',', found '%.40s'", o->name, max,
                             range, text);
        memcpy(AT(c, o->offset), list, (size_t)n * sizeof(int));
        memcpy(AT(c, o->count_offset), &n, sizeof n);
        return FFNN_OK;
    }
    case FFNN_OPTION_FLOAT: {
        char *end = NULL;
        errno = 0;
        v = strtod(text, &end);
        float f = (float)v;
        if (errno || end == text || *end || !within(&o->limit, v) || !isfinite(f))
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "%s: expected a number in %s, found "
                             "'%.40s'", o->name, range, text);
        if (v != 0.0 && f == 0.0f)
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "%s: expected a value a 32-bit float "
                             "can hold, found '%.40s', below its smallest (about 1.4e-45)",
                             o->name, text);
        memcpy(AT(c, o->offset), &f, sizeof f);
        return FFNN_OK;
    }
    default: { /* INT, SIZE, U64 */
        if (!parse_integer(text, o->type != FFNN_OPTION_INT, &v, &u) ||
            (o->type != FFNN_OPTION_U64 && !within(&o->limit, v)))
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "%s: expected an integer in %s, "
                             "found '%.40s'", o->name, range, text);
        if (o->type == FFNN_OPTION_INT) {
            int i = (int)v;
            memcpy(AT(c, o->offset), &i, sizeof i);
        } else if (o->type == FFNN_OPTION_SIZE) {
            size_t z = (size_t)u;
            memcpy(AT(c, o->offset), &z, sizeof z);
        } else {
            memcpy(AT(c, o->offset), &u, sizeof u);
        }
        return FFNN_OK;
    }
    }
}

/* Store default value v of option o into c (INT_LIST: v is its count). */
static void store_default(ffnn_train_config *c, const ffnn_train_option *o, double v)
{
    int i = (int)v;
    size_t z = (size_t)v;
    uint64_t u = (uint64_t)v;
    float f = (float)v;
    switch (o->type) {
    case FFNN_OPTION_SIZE: memcpy(AT(c, o->offset), &z, sizeof z); break;
    case FFNN_OPTION_U64: memcpy(AT(c, o->offset), &u, sizeof u); break;
    case FFNN_OPTION_FLOAT: memcpy(AT(c, o->offset), &f, sizeof f); break;
    case FFNN_OPTION_INT_LIST: memcpy(AT(c, o->count_offset), &i, sizeof i); break;
    default: memcpy(AT(c, o->offset), &i, sizeof i); break;
    }
}

ffnn_train_config ffnn_train_config_default(void)
{
    ffnn_train_config c;
    memset(&c, 0, sizeof c);
    for (size_t i = 0; i < ROW_COUNT; i++)
        store_default(&c, &rows[i].d, rows[i].d.default_value);
    return c;
}

ffnn_status ffnn_train_options_check(const ffnn_train_config *c)
{
    char range[96], found[FFNN_OPTION_LIST_TEXT_MAX];
    for (size_t k = 0; k < ROW_COUNT; k++) {
        const ffnn_train_option *o = &rows[k].d;
        const ffnn_config_limit *l = &o->limit;
        range_text(l, range, sizeof range);
        if (o->type == FFNN_OPTION_INT_LIST) {
            const int n = (int)ffnn_option_value(c, o), max = (int)(o->size / sizeof(int));
            const int *v = (const int *)(const void *)AT_CONST(c, o->offset);
            if (n < 0 || n > max)
                return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "%s must be in [0, %d], found %d",
                                 o->count_name, max, n);
            for (int i = 0; i < n; i++)
                if (!within(l, v[i]) || (i > 0 && v[i] <= v[i - 1]))
                    return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "%s: element %d must be in "
                                     "%s and above the one before, found %d", o->name, i + 1,
                                     range, v[i]);
            continue;
        }
        if (o->type == FFNN_OPTION_U64 || within(l, ffnn_option_value(c, o)))
            continue;
        if (o->type == FFNN_OPTION_ENUM) { /* the value and the names */
            char names[256] = "";
            for (int v = (int)l->min; v <= (int)l->max; v++)
                snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                         v > (int)l->min ? ", " : "", rows[k].kind->name(v));
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "unknown %s %d (%s must be in %s: %s)",
                             o->name, (int)ffnn_option_value(c, o), o->name, range, names);
        }
        if (o->type == FFNN_OPTION_FLOAT)
            snprintf(found, sizeof found, "%g", ffnn_option_value(c, o));
        else
            snprintf(found, sizeof found, "%.17g", ffnn_option_value(c, o));
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "%s must be in %s, found %s", o->name,
                         range, found);
    }
    return FFNN_OK;
}

/* ------------------------------------------------------------ by name */

/* The row of option name into *r, for fn (the function asked) called with the
 * arguments cfg, name and data; else the error naming fn (a NULL argument, an
 * unknown name). */
static ffnn_status known_row(const char *fn, const void *cfg, const char *name,
                             const void *data, const option_row **r)
{
    if (!cfg || !name || !data)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "%s: NULL argument", fn);
    *r = find_row(name);
    if (!*r)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "%s: unknown option '%.60s' "
                         "(ffnn_train_option_at lists them)", fn, name);
    return FFNN_OK;
}

ffnn_status ffnn_train_config_set(ffnn_train_config *cfg, const char *name, const char *value)
{
    const option_row *r = NULL;
    ffnn_status st = known_row("ffnn_train_config_set", cfg, name, value, &r);
    if (st != FFNN_OK)
        return st;
    ffnn_train_config next = *cfg;
    st = ffnn_option_parse(&next, &r->d, value);
    if (st != FFNN_OK)
        return r->d.type == FFNN_OPTION_ENUM ? st : ffnn_fail_context(st, "ffnn_train_config_set");
    *cfg = next;
    return FFNN_OK;
}

ffnn_status ffnn_train_config_get(const ffnn_train_config *cfg, const char *name, char *buf,
                                  size_t size)
{
    const option_row *r = NULL;
    ffnn_status st = known_row("ffnn_train_config_get", cfg, name, buf, &r);
    if (st != FFNN_OK)
        return st;
    if (!ffnn_option_format(cfg, &r->d, buf, size))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_train_config_get: %s: a buffer of "
                         "%zu bytes is too small", name, size);
    return FFNN_OK;
}
