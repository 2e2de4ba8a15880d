/* csv_levels.c - the distinct texts of a CSV column (csv.h): class labels and
 * the levels of a categorical feature, numbered by first appearance, found by
 * an FNV-1a hash with linear probing, sorted for the class numbers. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "data/csv.h"

static uint64_t levels_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h;
}

static ffnn_status levels_grow(csv_levels *k)
{
    size_t slots = k->slots ? 2 * k->slots : 64;
    size_t *t = calloc(slots, sizeof *t);
    if (!t)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for the distinct texts of a column");
    for (size_t i = 0; i < k->count; i++) {
        size_t h = (size_t)levels_hash(k->name[i], strlen(k->name[i])) & (slots - 1);
        while (t[h])
            h = (h + 1) & (slots - 1);
        t[h] = i + 1;
    }
    free(k->slot);
    k->slot = t;
    k->slots = slots;
    return FFNN_OK;
}

size_t csv_level_id(csv_levels *k, const char *s, size_t len, int add, ffnn_status *st)
{
    *st = FFNN_OK;
    if (k->count * 2 >= k->slots && (*st = levels_grow(k)) != FFNN_OK)
        return SIZE_MAX;
    size_t h = (size_t)levels_hash(s, len) & (k->slots - 1);
    for (; k->slot[h]; h = (h + 1) & (k->slots - 1)) {
        const char *t = k->name[k->slot[h] - 1];
        if (strncmp(t, s, len) == 0 && t[len] == '\0')
            return k->slot[h] - 1;
    }
    if (!add)
        return SIZE_MAX;
    if (k->count == k->cap) {
        size_t cap = k->cap ? 2 * k->cap : 16;
        char **n = realloc(k->name, cap * sizeof *n);
        if (!n) {
            *st = ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for the distinct texts");
            return SIZE_MAX;
        }
        k->name = n;
        k->cap = cap;
    }
    char *copy = malloc(len + 1);
    if (!copy) {
        *st = ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for the distinct texts");
        return SIZE_MAX;
    }
    memcpy(copy, s, len);
    copy[len] = '\0';
    k->name[k->count] = copy;
    k->slot[h] = k->count + 1;
    return k->count++;
}

void csv_levels_free(csv_levels *k)
{
    for (size_t i = 0; i < k->count; i++)
        free(k->name[i]);
    free(k->name);
    free(k->slot);
    memset(k, 0, sizeof *k);
}

/* An integer label: 1 and *v, else 0. */
static int levels_integer(const char *s, long long *v)
{
    char *end;
    s += strspn(s, " \t");
    if (!*s)
        return 0;
    errno = 0;
    *v = strtoll(s, &end, 10);
    end += strspn(end, " \t");
    return *end == '\0' && errno == 0;
}

typedef struct levels_sorted {
    const char *name;
    long long value;
    int numeric; /* the same for every element: compare values first */
    size_t id;   /* order of first appearance */
} levels_sorted;

static int levels_compare(const void *a, const void *b)
{
    const levels_sorted *x = a, *y = b;
    if (x->numeric && x->value != y->value)
        return x->value < y->value ? -1 : 1;
    return strcmp(x->name, y->name);
}

ffnn_status csv_levels_sort(const csv_levels *k, size_t *rank, const char **names)
{
    levels_sorted *v = malloc((k->count ? k->count : 1) * sizeof *v);
    int numeric = 1;
    if (!v)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for the classes");
    for (size_t i = 0; i < k->count; i++) {
        v[i].name = k->name[i];
        v[i].id = i;
        numeric &= levels_integer(k->name[i], &v[i].value);
    }
    for (size_t i = 0; i < k->count; i++)
        v[i].numeric = numeric;
    qsort(v, k->count, sizeof *v, levels_compare);
    for (size_t c = 0; c < k->count; c++) {
        rank[v[c].id] = c;
        names[c] = v[c].name;
    }
    free(v);
    return FFNN_OK;
}
