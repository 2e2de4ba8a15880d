/*
 * npy.c - NumPy .npy files as data sets (ffnn_dataset_load_npy in ffnn.h).
 *
 * The format (numpy.lib.format): "\x93NUMPY", major, minor, the header length
 * (uint16 little-endian for version 1, uint32 for 2 and 3), then the header, a
 * Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (n, f), }
 * padded with spaces and a newline, then the array's bytes. Every header field
 * and the payload size (against the file size) are checked before anything is
 * allocated; .npz (a zip of .npy files) is not read.
 *
 * Little-endian float32 features in a .npy file (not an .npz member) whose
 * payload starts 4-byte aligned are mapped read-only (mmap PROT_READ,
 * MAP_PRIVATE) and used in place: the data set's values point into the mapping
 * (ffnn_dataset.map, munmap'd on free), so a large file costs its page cache
 * and no malloc'd copy. The header and the file size against the shape are
 * checked before the mapping is made (a truncated file is refused, not a
 * SIGBUS later), and every value is checked finite through it. Other dtypes,
 * an unaligned payload, or a file mmap refuses are read into a float32 copy.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/error.h"
#include "data/dataset.h"

enum { NPY_MAX_HEADER = 1 << 20, NPY_MAX_DIMS = 2 };

typedef struct npy_file {
    const char *path;     /* for messages: "FILE" or "FILE.npz[x.npy]"    */
    const char *open_path; /* the file to open, or NULL: f given (npz)   */
    FILE *f;
    char kind;            /* 'f' float, 'i' signed, 'u' unsigned integer */
    size_t itemsize;      /* bytes per element                            */
    int ndim;
    uint64_t shape[NPY_MAX_DIMS];
    uint64_t data_start;  /* byte offset of the payload                   */
    uint64_t file_size;   /* bytes of the file (checked against the shape) */
} npy_file;

static ffnn_status npy_fail(const npy_file *n, uint64_t offset, const char *fmt, const char *a,
                            const char *b)
{
    char msg[400];
    snprintf(msg, sizeof msg, fmt, a, b);
    return ffnn_fail(FFNN_ERR_FORMAT, "%s: offset %llu: %s", n->path,
                     (unsigned long long)offset, msg);
}

/* Skip spaces in the header text. */
static const char *npy_ws(const char *s)
{
    return s + strspn(s, " \t\n");
}

/* A quoted Python string at s: its text into out (size cap); the end, or NULL. */
static const char *npy_string(const char *s, char *out, size_t cap)
{
    char q = *s;
    size_t k = 0;
    if (q != '\'' && q != '"')
        return NULL;
    for (s++; *s && *s != q; s++) {
        if (k + 1 >= cap)
            return NULL;
        out[k++] = *s;
    }
    if (*s != q)
        return NULL;
    out[k] = '\0';
    return s + 1;
}

/* The dtype text: '<f4', '|u1' ... -> kind and item size. */
static ffnn_status npy_dtype(npy_file *n, const char *d, uint64_t at)
{
    char shown[24];
    ffnn_printable(d, strlen(d), 16, shown, sizeof shown);
    if (d[0] == '>' || (d[0] == '|' && d[2] != '1') || strlen(d) != 3 ||
        (d[0] != '<' && d[0] != '|' && d[0] != '='))
        return npy_fail(n, at, "descr '%s': expected a little-endian float or integer dtype "
                        "('<f4', '<f8', '|u1', '<i4', '<i8' ...)%s", shown,
                        d[0] == '>' ? " (this is big-endian)" : "");
    n->kind = d[1];
    n->itemsize = (size_t)(d[2] - '0');
    int ok = (n->kind == 'f' && (n->itemsize == 4 || n->itemsize == 8)) ||
             ((n->kind == 'i' || n->kind == 'u') &&
              (n->itemsize == 1 || n->itemsize == 2 || n->itemsize == 4 || n->itemsize == 8));
    if (!ok)
        return npy_fail(n, at, "descr '%s': expected float32, float64 or an integer dtype of "
                        "1, 2, 4 or 8 bytes%s", shown, "");
    return FFNN_OK;
}

/* The shape tuple at s: "(n,)" or "(n, f)". */
static const char *npy_shape(npy_file *n, const char *s)
{
    if (*s != '(')
        return NULL;
    s = npy_ws(s + 1);
    n->ndim = 0;
    while (*s != ')') {
        char *end;
        if (n->ndim == NPY_MAX_DIMS || *s < '0' || *s > '9')
            return NULL;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno)
            return NULL;
        n->shape[n->ndim++] = v;
        s = npy_ws(end);
        if (*s == ',')
            s = npy_ws(s + 1);
        else if (*s != ')')
            return NULL;
    }
    return s + 1;
}

/* Open and check the magic, version and header dict; nothing allocated. */
static ffnn_status npy_open(npy_file *n)
{
    unsigned char pre[12];
    char header[4096], *h = header;
    uint64_t hlen, fsize;
    ffnn_status st = FFNN_OK;

    if (!n->f && !(n->f = fopen(n->open_path, "rb")))
        return ffnn_fail(FFNN_ERR_IO, "%s: cannot open: %s", n->path, strerror(errno));
    if (fseek(n->f, 0, SEEK_END) != 0 || (long long)(fsize = (uint64_t)ftell(n->f)) < 0 ||
        fseek(n->f, 0, SEEK_SET) != 0)
        return ffnn_fail(FFNN_ERR_IO, "%s: cannot seek: %s", n->path, strerror(errno));
    n->file_size = fsize;
    size_t got = fread(pre, 1, 10, n->f);
    if (got < 10 || memcmp(pre, "\x93NUMPY", 6) != 0)
        return npy_fail(n, 0, "expected the magic \\x93NUMPY and a version (a .npy file)%s%s",
                        got < 10 ? ", found a file of fewer than 10 bytes" : "", "");
    if (pre[6] < 1 || pre[6] > 3) {
        char v[8];
        snprintf(v, sizeof v, "%u", pre[6]);
        return npy_fail(n, 6, "expected format version 1, 2 or 3, found %s%s", v, "");
    }
    if (pre[6] == 1) {
        hlen = (uint64_t)pre[8] | (uint64_t)pre[9] << 8;
        n->data_start = 10 + hlen;
    } else {
        if (fread(pre + 10, 1, 2, n->f) != 2)
            return npy_fail(n, 10, "expected a 4-byte header length%s%s", "", "");
        hlen = (uint64_t)pre[8] | (uint64_t)pre[9] << 8 | (uint64_t)pre[10] << 16 |
               (uint64_t)pre[11] << 24;
        n->data_start = 12 + hlen;
    }
    if (hlen >= sizeof header || n->data_start > fsize)
        return npy_fail(n, 8, "expected a header of under 4096 bytes within the file, found "
                        "a longer one%s%s", "", "");
    if (fread(header, 1, hlen, n->f) != hlen)
        return ffnn_fail(FFNN_ERR_IO, "%s: cannot read the header: %s", n->path,
                         ferror(n->f) ? strerror(errno) : "short file");
    header[hlen] = '\0';
    if (strlen(header) != hlen)
        return npy_fail(n, n->data_start - hlen, "expected header text, found a NUL byte%s%s",
                        "", "");
    int have_descr = 0, have_order = 0, have_shape = 0;
    uint64_t base = n->data_start - hlen;
    h = (char *)npy_ws(h);
    if (*h != '{')
        return npy_fail(n, base, "expected the header dict '{', found something else%s%s", "",
                        "");
    h = (char *)npy_ws(h + 1);
    while (*h != '}') {
        char key[32], value[32];
        const char *v = npy_string(h, key, sizeof key);
        uint64_t at = base + (uint64_t)(h - header);
        if (!v || *(v = npy_ws(v)) != ':')
            return npy_fail(n, at, "expected a quoted key and ':' in the header dict%s%s", "",
                            "");
        v = npy_ws(v + 1);
        if (strcmp(key, "descr") == 0) {
            if (!(v = npy_string(v, value, sizeof value)))
                return npy_fail(n, at, "expected a dtype string for 'descr'%s%s", "", "");
            if ((st = npy_dtype(n, value, at)) != FFNN_OK)
                return st;
            have_descr = 1;
        } else if (strcmp(key, "fortran_order") == 0) {
            if (strncmp(v, "True", 4) == 0)
                return npy_fail(n, at, "fortran_order True: expected C order (numpy."
                                "ascontiguousarray before saving)%s%s", "", "");
            if (strncmp(v, "False", 5) != 0)
                return npy_fail(n, at, "expected True or False for 'fortran_order'%s%s", "", "");
            v += 5;
            have_order = 1;
        } else if (strcmp(key, "shape") == 0) {
            if (!(v = npy_shape(n, v)))
                return npy_fail(n, at, "expected a shape tuple (rows,) or (rows, columns) of "
                                "at most %s dimensions%s", "2", "");
            have_shape = 1;
        } else {
            char shown[40];
            ffnn_printable(key, strlen(key), 24, shown, sizeof shown);
            return npy_fail(n, at, "unexpected key '%s' in the header dict%s", shown, "");
        }
        v = npy_ws(v);
        if (*v == ',')
            v = npy_ws(v + 1);
        else if (*v != '}')
            return npy_fail(n, base + (uint64_t)(v - header), "expected ',' or '}' in the "
                            "header dict%s%s", "", "");
        h = (char *)v;
    }
    if (!have_descr || !have_order || !have_shape)
        return npy_fail(n, base, "expected the keys 'descr', 'fortran_order' and 'shape', "
                        "found %s missing%s", !have_descr ? "'descr'" : !have_order
                        ? "'fortran_order'" : "'shape'", "");
    if (n->ndim == 0 || n->shape[0] == 0 || (n->ndim == 2 && n->shape[1] == 0))
        return npy_fail(n, base, "expected a shape (rows,) or (rows, columns) with no zero "
                        "dimension%s%s", "", "");
    uint64_t cols = n->ndim == 2 ? n->shape[1] : 1;
    if (n->shape[0] > UINT64_MAX / cols / n->itemsize ||
        n->shape[0] * cols * n->itemsize != fsize - n->data_start) {
        char want[64], found[64];
        snprintf(want, sizeof want, "%llu", (unsigned long long)n->shape[0] * cols *
                 n->itemsize);
        snprintf(found, sizeof found, "%llu", (unsigned long long)(fsize - n->data_start));
        return npy_fail(n, n->data_start, "expected a payload of %s bytes (shape x dtype), "
                        "found %s (truncated or trailing bytes)", want, found);
    }
    return FFNN_OK;
}

/* Element i of raw (the file's bytes) as a double; *integer 1 for integer kinds. */
static double npy_value(const npy_file *n, const unsigned char *raw, size_t i)
{
    const unsigned char *p = raw + i * n->itemsize;
    uint64_t u = 0;
    for (size_t b = 0; b < n->itemsize; b++)
        u |= (uint64_t)p[b] << (8 * b);
    if (n->kind == 'f') {
        if (n->itemsize == 4) {
            uint32_t w = (uint32_t)u;
            float f;
            memcpy(&f, &w, 4);
            return f;
        }
        double d;
        memcpy(&d, &u, 8);
        return d;
    }
    if (n->kind == 'u')
        return (double)u;
    int shift = (int)(64 - 8 * n->itemsize); /* sign-extend */
    return (double)((int64_t)(u << shift) >> shift);
}

enum { NPY_CHUNK = 1 << 16 }; /* elements per read of a payload */

/* Elements [at, at + k) of n's payload (read in order) into buf [k * itemsize]. */
static ffnn_status npy_read(npy_file *n, size_t at, unsigned char *buf, size_t k)
{
    if ((at == 0 && fseek(n->f, (long)n->data_start, SEEK_SET) != 0) ||
        fread(buf, n->itemsize, k, n->f) != k)
        return ffnn_fail(FFNN_ERR_IO, "%s: cannot read the payload: %s", n->path,
                         ferror(n->f) ? strerror(errno) : "the file is shorter than its shape");
    return FFNN_OK;
}

/* Whether n's elements are little-endian float32, as this host's floats. */
static int npy_native_f4(const npy_file *n)
{
    const uint16_t one = 1;
    return n->kind == 'f' && n->itemsize == 4 && *(const unsigned char *)&one == 1;
}

/* The arrays of an .npz file as in-memory streams: features (x, X or arr_0) and,
 * when present, labels (y or arr_1). */
static ffnn_status npz_open(const char *path, npy_file *x, npy_file *y, unsigned char **mem,
                            char names[2][600])
{
    static const char *const xs[] = {"x.npy", "X.npy", "arr_0.npy", NULL};
    static const char *const ys[] = {"y.npy", "arr_1.npy", NULL};
    size_t n[2] = {0, 0};
    const char *found[2] = {NULL, NULL};
    ffnn_status st = ffnn_npz_member(path, xs, &mem[0], &n[0], &found[0]);
    if (st == FFNN_OK && !mem[0])
        st = ffnn_fail(FFNN_ERR_FORMAT, "%s: expected an array named x (or X, or arr_0: "
                       "numpy.savez(path, x=X, y=y)), found none", path);
    if (st == FFNN_OK)
        st = ffnn_npz_member(path, ys, &mem[1], &n[1], &found[1]);
    for (int k = 0; st == FFNN_OK && k < 2; k++) {
        npy_file *f = k ? y : x;
        if (!mem[k])
            continue;
        snprintf(names[k], 600, "%s[%s]", path, found[k]);
        f->path = names[k];
        if (!(f->f = fmemopen(mem[k], n[k] ? n[k] : 1, "rb")))
            st = ffnn_fail(FFNN_ERR_NO_MEMORY, "%s: cannot open the member in memory",
                           names[k]);
    }
    return st;
}

ffnn_status ffnn_dataset_load_npy(const char *x_path, const char *y_path, ffnn_dataset **out)
{
    npy_file x = {x_path, x_path, NULL, 0, 0, 0, {0, 0}, 0, 0};
    npy_file y = {y_path, y_path, NULL, 0, 0, 0, {0, 0}, 0, 0};
    unsigned char *chunk = NULL, *mem[2] = {NULL, NULL};
    char names[2][600];
    ffnn_dataset *ds = NULL;
    ffnn_status st;

    if (!x_path || !out)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_dataset_load_npy: NULL argument");
    size_t len = strlen(x_path);
    if (len >= 4 && strcmp(x_path + len - 4, ".npz") == 0) {
        if (y_path)
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "%s: an .npz file holds its labels (y); "
                             "expected no separate labels file, found %s", x_path, y_path);
        st = npz_open(x_path, &x, &y, mem, names);
        y_path = y.f ? y.path : NULL;
    } else {
        st = FFNN_OK;
    }
    if (st == FFNN_OK)
        st = npy_open(&x);
    if (st == FFNN_OK && x.kind != 'f')
        st = npy_fail(&x, 0, "expected float32 or float64 features, found an integer dtype%s%s",
                      "", "");
    if (st == FFNN_OK && y_path)
        st = npy_open(&y);
    if (st == FFNN_OK && y_path && y.shape[0] != x.shape[0]) {
        char a[32], b[32];
        snprintf(a, sizeof a, "%llu", (unsigned long long)x.shape[0]);
        snprintf(b, sizeof b, "%llu", (unsigned long long)y.shape[0]);
        st = npy_fail(&y, 0, "expected as many rows as the features (%s), found %s", a, b);
    }
    if (st == FFNN_OK && y_path && y.kind != 'f' && y.ndim == 2 && y.shape[1] != 1)
        st = npy_fail(&y, 0, "expected integer class labels of shape (rows,) or (rows, 1)%s%s",
                      "", "");
    int targets = y_path && y.kind == 'f';
    size_t rows = (size_t)x.shape[0], features = x.ndim == 2 ? (size_t)x.shape[1] : 1;
    size_t width = targets ? (y.ndim == 2 ? (size_t)y.shape[1] : 1) : 0;
    if (st == FFNN_OK)
        st = ffnn_dataset_alloc_kind(rows, 1, features, 1, width, &ds);
    /* float32 features of a plain file: the file's bytes in place (its size
     * matched the shape in npy_open, so every page of the payload exists) */
    int mapped = 0;
    if (st == FFNN_OK && x.open_path && npy_native_f4(&x) && x.data_start % sizeof(float) == 0 &&
        x.file_size <= SIZE_MAX) {
        void *map = mmap(NULL, (size_t)x.file_size, PROT_READ, MAP_PRIVATE, fileno(x.f), 0);
        if (map != MAP_FAILED) { /* else (a device, a file system without mmap) read it */
            free(ds->values);
            ds->values = (float *)(void *)((unsigned char *)map + x.data_start);
            ds->map = map;
            ds->map_size = (size_t)x.file_size;
            mapped = 1;
        }
    }
    /* the payloads stream through a chunk (float32 features straight into the
     * matrix): memory is the data set and one chunk, whatever the dtype */
    size_t xn = rows * features, yn = y_path ? rows * (width ? width : 1) : 0;
    if (st == FFNN_OK && !(chunk = malloc((size_t)NPY_CHUNK * 8)))
        st = ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
    for (size_t at = 0, k; st == FFNN_OK && at < xn; at += k) {
        k = xn - at < NPY_CHUNK ? xn - at : NPY_CHUNK;
        int direct = npy_native_f4(&x);
        unsigned char *raw = direct ? (unsigned char *)(ds->values + at) : chunk;
        if (!mapped && (st = npy_read(&x, at, raw, k)) != FFNN_OK)
            break;
        for (size_t j = 0; j < k; j++) {
            size_t i = at + j;
            double v = direct ? (double)ds->values[i] : npy_value(&x, raw, j);
            if (!isfinite(v) || fabs(v) > FLT_MAX) {
                char e[96], f[32];
                snprintf(e, sizeof e, "%zu (row %zu, column %zu)", i, i / features,
                         i % features);
                snprintf(f, sizeof f, "%g", v);
                st = npy_fail(&x, x.data_start + i * x.itemsize, "element %s: expected a "
                              "finite float32 value, found %s", e, f);
                break;
            }
            if (!mapped)
                ds->values[i] = (float)v;
        }
    }
    int32_t max = 0;
    for (size_t at = 0, k; st == FFNN_OK && at < yn; at += k) {
        k = yn - at < NPY_CHUNK ? yn - at : NPY_CHUNK;
        if ((st = npy_read(&y, at, chunk, k)) != FFNN_OK)
            break;
        for (size_t j = 0; st == FFNN_OK && j < k; j++) {
            size_t i = at + j;
            double v = npy_value(&y, chunk, j);
            char e[32], f[32];
            if (targets ? !isfinite(v) || fabs(v) > FLT_MAX : v < 0 || v > INT32_MAX - 1) {
                snprintf(e, sizeof e, "%zu", i);
                snprintf(f, sizeof f, "%g", v);
                st = npy_fail(&y, y.data_start + i * y.itemsize, targets
                              ? "element %s: expected a finite float32 target, found %s"
                              : "element %s: expected a class label in [0, 2^31 - 2], found %s",
                              e, f);
            } else if (targets) {
                ds->targets[i] = (float)v;
            } else if ((ds->labels[i] = (int32_t)v) > max) {
                max = ds->labels[i];
            }
        }
    }
    if (st == FFNN_OK && !targets) {
        if (!y_path)
            memset(ds->labels, 0, rows * sizeof *ds->labels);
        ds->classes = max + 1;
    }
    if (x.f)
        fclose(x.f);
    if (y.f)
        fclose(y.f);
    free(chunk);
    free(mem[0]);
    free(mem[1]);
    if (st != FFNN_OK) {
        ffnn_dataset_free(ds);
        return st;
    }
    *out = ds;
    return FFNN_OK;
}
