/* idx.c - loading IDX files (the MNIST / Fashion-MNIST / KMNIST format), raw or
 * gzip-compressed, into an ffnn_dataset.
 *
 * An IDX file of unsigned bytes is: 00 00 08 N, then N big-endian uint32 sizes,
 * then the product of the sizes in bytes. Images have N = 3 (count, rows, cols),
 * labels N = 1 (count). Every header field of both files is checked before
 * anything is allocated; for raw files the payload size is compared with the
 * file size up front. For gzip files, whose decompressed size is known only by
 * reading: the header's size must fit what the compressed file can hold
 * (deflate expands at most 1032:1), and a payload above 64 MiB is first
 * decompressed into a small scratch buffer, counted as it goes (stopping at the
 * first byte too many) and only then allocated and read; the host memory is
 * checked before the allocation (core/memory.h).
 *
 * Files are read through zlib's gz* functions, which decode gzip when the file
 * starts with 1f 8b and pass other files through unchanged. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "data/dataset.h"
#include "core/error.h"
#include "core/memory.h"

#define IDX_MAX_DIMS 3
#define IDX_MAX_PAYLOAD ((uint64_t)1 << 32) /* 4 GiB: far above any IDX data set */
#define IDX_READ_CHUNK (1u << 30)           /* gzread takes an unsigned, returns int */
#define IDX_GZ_BUFFER (1u << 17)            /* zlib's input buffer for reading */
#define IDX_DEFLATE_RATIO 1032              /* deflate's largest expansion       */
#define IDX_COUNT_FIRST ((uint64_t)64 << 20) /* gzip payloads counted before allocating */
#define IDX_SCRATCH (1u << 16)              /* the counting pass's buffer        */

/* One IDX file being read. */
typedef struct idx_file {
    const char *path;
    const char *what;             /* "image" or "label"                          */
    int ndims;                    /* expected dimension count: 3 or 1            */
    gzFile gz;                    /* NULL until opened                           */
    int gzip;                     /* 1 when the file is gzip-compressed          */
    int size_known;               /* 1 when file_size is the size of raw IDX data */
    uint64_t file_size;           /* bytes on disk                               */
    uint64_t offset;              /* IDX bytes consumed (decompressed for gzip)  */
    uint32_t dims[IDX_MAX_DIMS];  /* [ndims]: count, rows, cols                  */
    uint64_t payload;             /* product of dims: bytes after the header     */
} idx_file;

static const char *const idx_dim_names[2][IDX_MAX_DIMS] = {
    {"label count", "", ""},
    {"image count", "row count", "column count"},
};

/* A file description with nothing opened yet. */
static idx_file idx_file_init(const char *path, const char *what, int ndims)
{
    idx_file f;
    memset(&f, 0, sizeof f);
    f.path = path;
    f.what = what;
    f.ndims = ndims;
    return f;
}

/* Record "PATH: offset N[ of the decompressed data]: MESSAGE" and return status. */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static ffnn_status idx_fail(const idx_file *f, uint64_t offset, ffnn_status status,
                            const char *fmt, ...)
{
    char msg[768];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ffnn_fail(status, "%s: offset %llu%s: %s", f->path, (unsigned long long)offset,
                     f->gzip ? " of the decompressed data" : "", msg);
}

/* 1 when path ends in ".gz". */
static int idx_named_gz(const char *path)
{
    size_t n = strlen(path);
    return n >= 3 && strcmp(path + n - 3, ".gz") == 0;
}

/* Open f->path (raw or gzip) and find out which it is and, for a raw regular
 * file, its size. */
static ffnn_status idx_open(idx_file *f)
{
    struct stat st;

    if (stat(f->path, &st) != 0)
        return ffnn_fail(FFNN_ERR_IO, "%s: cannot open the %s file: %s", f->path, f->what,
                         strerror(errno));
    if (S_ISDIR(st.st_mode))
        return ffnn_fail(FFNN_ERR_IO, "%s: cannot open the %s file: it is a directory",
                         f->path, f->what);
    errno = 0;
    f->gz = gzopen(f->path, "rb");
    if (!f->gz)
        return ffnn_fail(FFNN_ERR_IO, "%s: cannot open the %s file: %s", f->path, f->what,
                         errno ? strerror(errno) : "out of memory");
    if (gzbuffer(f->gz, IDX_GZ_BUFFER) != 0)
        return ffnn_fail(FFNN_ERR_IO, "%s: cannot set the zlib buffer size", f->path);
    f->gzip = !gzdirect(f->gz); /* looks at the first bytes: 1f 8b means gzip */
    f->size_known = S_ISREG(st.st_mode) && !f->gzip;
    f->file_size = (uint64_t)st.st_size;
    return FFNN_OK;
}

/* Close f's stream (if open). */
static void idx_close(idx_file *f)
{
    if (f->gz)
        gzclose(f->gz);
    f->gz = NULL;
}

/* zlib's message for f without the "PATH: " that gzerror puts in front. */
static const char *idx_zlib_message(const idx_file *f, int *err)
{
    const char *msg = gzerror(f->gz, err);
    size_t n = strlen(f->path);

    if (strncmp(msg, f->path, n) == 0 && strncmp(msg + n, ": ", 2) == 0)
        msg += n + 2;
    return msg;
}

/* After a short read: FFNN_OK at a clean end of the data, else an error naming
 * zlib's complaint (a corrupt or truncated gzip stream, a read error). zlib
 * decodes ahead of what it hands over, so a corrupt stream is reported at the
 * offset reached, with the damage there or later. */
static ffnn_status idx_stream_status(const idx_file *f)
{
    int err = Z_OK;
    const char *msg = idx_zlib_message(f, &err);

    switch (err) {
    case Z_OK:
    case Z_STREAM_END:
        return FFNN_OK;
    case Z_ERRNO:
        return idx_fail(f, f->offset, FFNN_ERR_IO, "read error: %s", strerror(errno));
    case Z_BUF_ERROR:
        return idx_fail(f, f->offset, FFNN_ERR_FORMAT,
                        "expected more gzip data, found the end of the compressed file "
                        "(zlib: %s): the .gz file is truncated", msg);
    case Z_MEM_ERROR:
        return idx_fail(f, f->offset, FFNN_ERR_NO_MEMORY, "zlib: %s", msg);
    default:
        return idx_fail(f, f->offset, FFNN_ERR_FORMAT,
                        "expected a valid gzip stream, found corrupt compressed data at or "
                        "after this point, within the first %lld compressed bytes of the file "
                        "(zlib: %s)", (long long)gzoffset(f->gz), msg);
    }
}

/* Read up to n bytes into buf [n]; *got receives how many were read (fewer only
 * at the end of the data). Errors: a read error, a corrupt or truncated gzip stream. */
static ffnn_status idx_read(idx_file *f, uint8_t *buf, uint64_t n, uint64_t *got)
{
    *got = 0;
    while (*got < n) {
        uint64_t want = n - *got;
        unsigned chunk = want > IDX_READ_CHUNK ? IDX_READ_CHUNK : (unsigned)want;
        int r = gzread(f->gz, buf + *got, chunk);
        if (r > 0) {
            *got += (unsigned)r;
            f->offset += (unsigned)r;
        }
        if (r < 0 || (unsigned)r < chunk)
            return idx_stream_status(f);
    }
    return FFNN_OK;
}

/* Hex text of up to 2 bytes of b [n] into out, or "end of file" when n is 0. */
static void idx_hex2(const uint8_t *b, uint64_t n, char *out, size_t size)
{
    if (n == 0)
        snprintf(out, size, "end of file (the file is empty)");
    else if (n == 1)
        snprintf(out, size, "%02x then end of file", b[0]);
    else
        snprintf(out, size, "%02x %02x", b[0], b[1]);
}

/* A file named *.gz must hold gzip data: raw bytes under that name are an error. */
static ffnn_status idx_check_gz_name(const idx_file *f, const uint8_t *magic, uint64_t got)
{
    char found[48];

    if (f->gzip || !idx_named_gz(f->path))
        return FFNN_OK;
    idx_hex2(magic, got, found, sizeof found);
    return idx_fail(f, 0, FFNN_ERR_FORMAT,
                    "expected gzip magic 1f 8b (the name ends in .gz), found %s%s", found,
                    got >= 2 && magic[0] == 0 && magic[1] == 0
                        ? ": this is raw IDX data; drop the .gz from the name" : "");
}

/* Name of an IDX type byte. */
static const char *idx_type_name(uint8_t t)
{
    switch (t) {
    case 0x08: return "unsigned byte";
    case 0x09: return "signed byte";
    case 0x0B: return "int16";
    case 0x0C: return "int32";
    case 0x0D: return "float32";
    case 0x0E: return "float64";
    default: return "not an IDX type";
    }
}

/* Check magic byte i (of 00 00 08 ndims) of f. */
static ffnn_status idx_check_magic_byte(const idx_file *f, const uint8_t *magic, int i)
{
    uint8_t b = magic[i];

    if (i < 2 && b != 0)
        return idx_fail(f, (uint64_t)i, FFNN_ERR_FORMAT,
                        "expected IDX magic byte 0x00, found 0x%02x%s", b,
                        i == 0 && b == 0x1f && f->gzip ? " (gzip data compressed twice?)" : "");
    if (i == 2 && b != 0x08)
        return idx_fail(f, 2, FFNN_ERR_FORMAT,
                        "expected IDX type byte 0x08 (unsigned byte), found 0x%02x (%s)", b,
                        idx_type_name(b));
    if (i == 3 && b != f->ndims)
        return idx_fail(f, 3, FFNN_ERR_FORMAT,
                        "expected %d dimension%s (an IDX %s file), found %u%s", f->ndims,
                        f->ndims == 1 ? "" : "s", f->what, b,
                        b == 1 ? " (is this a label file?)"
                               : b == 3 ? " (is this an image file?)" : "");
    return FFNN_OK;
}

/* Read and check the 4-byte magic 00 00 08 ndims. */
static ffnn_status idx_read_magic(idx_file *f)
{
    uint8_t magic[4];
    uint64_t got;
    ffnn_status st = idx_read(f, magic, sizeof magic, &got);

    if (st == FFNN_OK)
        st = idx_check_gz_name(f, magic, got);
    for (int i = 0; st == FFNN_OK && i < (int)got; i++)
        st = idx_check_magic_byte(f, magic, i);
    if (st == FFNN_OK && got < sizeof magic)
        st = idx_fail(f, got, FFNN_ERR_FORMAT,
                      "expected the 4-byte IDX magic 00 00 08 %02x, found end of file%s",
                      f->ndims, got == 0 ? (f->gzip ? " (no data)" : " (the file is empty)")
                                         : "");
    return st;
}

/* Read and check dimension i (a non-zero big-endian uint32) into f->dims[i]. */
static ffnn_status idx_read_dim(idx_file *f, int i)
{
    const char *name = idx_dim_names[f->ndims == 3][i];
    uint64_t at = f->offset, got;
    uint8_t b[4];
    ffnn_status st = idx_read(f, b, sizeof b, &got);

    if (st != FFNN_OK)
        return st;
    if (got < sizeof b)
        return idx_fail(f, f->offset, FFNN_ERR_FORMAT,
                        "expected the %s (dimension %d of %d, 4 bytes big-endian from offset "
                        "%llu), found end of file after %llu of its bytes", name, i + 1,
                        f->ndims, (unsigned long long)at, (unsigned long long)got);
    f->dims[i] = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
    if (f->dims[i] == 0)
        return idx_fail(f, at, FFNN_ERR_FORMAT, "expected a non-zero %s, found 0", name);
    return FFNN_OK;
}

/* The sizes as text, e.g. "60000 images of 28 x 28" or "60000 labels", into out. */
static void idx_dims_text(const idx_file *f, char *out, size_t size)
{
    if (f->ndims == 3)
        snprintf(out, size, "%lu images of %lu x %lu", (unsigned long)f->dims[0],
                 (unsigned long)f->dims[1], (unsigned long)f->dims[2]);
    else
        snprintf(out, size, "%lu labels", (unsigned long)f->dims[0]);
}

/* f->payload = product of the sizes, at most IDX_MAX_PAYLOAD (so no overflow:
 * each partial product is <= 2^32 before it is multiplied by a value < 2^32). */
static ffnn_status idx_payload_size(idx_file *f)
{
    char dims[64];
    uint64_t p = 1;
    double bytes = 1.0;

    for (int i = 0; i < f->ndims; i++)
        bytes *= f->dims[i];
    for (int i = 0; i < f->ndims; i++) {
        p *= f->dims[i];
        if (p > IDX_MAX_PAYLOAD) {
            idx_dims_text(f, dims, sizeof dims);
            return idx_fail(f, 4, FFNN_ERR_FORMAT,
                            "expected at most %llu bytes (4 GiB) of %s data, found %s = %.4g "
                            "bytes", (unsigned long long)IDX_MAX_PAYLOAD, f->what, dims, bytes);
        }
    }
    f->payload = p;
    return FFNN_OK;
}

/* For a raw regular file: the file size must be header + payload exactly. */
static ffnn_status idx_check_file_size(const idx_file *f)
{
    uint64_t header = f->offset, total = header + f->payload;
    char dims[64];

    if (!f->size_known || f->file_size == total)
        return FFNN_OK;
    idx_dims_text(f, dims, sizeof dims);
    if (f->file_size < total)
        return idx_fail(f, f->file_size, FFNN_ERR_FORMAT,
                        "expected %llu bytes of %s data (%s) after the %llu-byte header, a "
                        "%llu-byte file; found end of file (the file has %llu bytes: "
                        "truncated payload)", (unsigned long long)f->payload, f->what, dims,
                        (unsigned long long)header, (unsigned long long)total,
                        (unsigned long long)f->file_size);
    return idx_fail(f, total, FFNN_ERR_FORMAT,
                    "expected end of file after the %llu-byte header and payload (%s), "
                    "found %llu trailing byte(s) (the file has %llu bytes)",
                    (unsigned long long)total, dims,
                    (unsigned long long)(f->file_size - total),
                    (unsigned long long)f->file_size);
}

/* A gzip file of file_size bytes cannot decompress to more than about
 * IDX_DEFLATE_RATIO times that: a header that promises more is refused now. */
static ffnn_status idx_check_gzip_bound(const idx_file *f)
{
    uint64_t total = f->offset + f->payload;
    char dims[64];

    if (!f->gzip || f->file_size == 0 || total / IDX_DEFLATE_RATIO <= f->file_size)
        return FFNN_OK;
    idx_dims_text(f, dims, sizeof dims);
    return idx_fail(f, 4, FFNN_ERR_FORMAT,
                    "expected at most %llu bytes of data from a %llu-byte gzip file (deflate "
                    "expands at most %d:1), found a header promising %llu (%s): the file is "
                    "truncated or its header is wrong", (unsigned long long)f->file_size *
                    IDX_DEFLATE_RATIO, (unsigned long long)f->file_size, IDX_DEFLATE_RATIO,
                    (unsigned long long)total, dims);
}

/* Open f and read and check its whole header; nothing is allocated. */
static ffnn_status idx_open_header(idx_file *f)
{
    ffnn_status st = idx_open(f);

    if (st == FFNN_OK)
        st = idx_read_magic(f);
    for (int i = 0; st == FFNN_OK && i < f->ndims; i++)
        st = idx_read_dim(f, i);
    if (st == FFNN_OK)
        st = idx_payload_size(f);
    if (st == FFNN_OK)
        st = idx_check_file_size(f);
    if (st == FFNN_OK)
        st = idx_check_gzip_bound(f);
    return st;
}

/* For a large gzip payload: decompress it into a scratch buffer, counting, so
 * that a header promising more than the stream holds (or less) is refused
 * before the payload's buffer is allocated; then rewind to the payload. */
static ffnn_status idx_count_payload(idx_file *f)
{
    uint64_t start = f->offset, header = f->offset, got = 0, n;
    uint8_t *scratch;
    ffnn_status st = FFNN_OK;
    char dims[64];

    if (!f->gzip || f->payload < IDX_COUNT_FIRST)
        return FFNN_OK;
    scratch = malloc(IDX_SCRATCH);
    if (!scratch)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "%s: out of memory", f->path);
    /* read one byte past the payload: its presence means trailing data */
    while (st == FFNN_OK && got <= f->payload) {
        uint64_t want = f->payload + 1 - got;
        st = idx_read(f, scratch, want < IDX_SCRATCH ? want : IDX_SCRATCH, &n);
        got += n;
        if (n == 0)
            break;
    }
    free(scratch);
    idx_dims_text(f, dims, sizeof dims);
    if (st == FFNN_OK && got < f->payload)
        st = idx_fail(f, f->offset, FFNN_ERR_FORMAT,
                      "expected %llu bytes of %s data (%s) from offset %llu, found end of "
                      "file after %llu of them (truncated payload; counted before allocating)",
                      (unsigned long long)f->payload, f->what, dims, (unsigned long long)start,
                      (unsigned long long)got);
    else if (st == FFNN_OK && got > f->payload)
        st = idx_fail(f, start + f->payload, FFNN_ERR_FORMAT,
                      "expected end of data after the %llu-byte payload (%s), found trailing "
                      "bytes", (unsigned long long)f->payload, dims);
    if (st != FFNN_OK)
        return st;
    if (gzrewind(f->gz) != 0 || gzseek(f->gz, (z_off_t)header, SEEK_SET) != (z_off_t)header)
        return ffnn_fail(FFNN_ERR_IO, "%s: cannot rewind the gzip stream", f->path);
    f->offset = header;
    return FFNN_OK;
}

/* Walk the gzip members of f's file with inflate: after each member's end the
 * file must end or another member (1f 8b) start. zlib's gzread stops quietly
 * at bytes that do not start a member, so trailing garbage would pass. */
static ffnn_status idx_gzip_walk(const idx_file *f)
{
    FILE *fp = fopen(f->path, "rb");
    unsigned char *in = malloc(2 * IDX_SCRATCH), *out = in ? in + IDX_SCRATCH : NULL;
    z_stream z;
    uint64_t read_total = 0;
    ffnn_status st = FFNN_OK;
    int ret = Z_OK;

    memset(&z, 0, sizeof z);
    if (!fp || !in || inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
        st = ffnn_fail(FFNN_ERR_IO, "%s: cannot check the end of the gzip stream: %s",
                       f->path, !fp ? strerror(errno) : "out of memory");
        goto done;
    }
    for (;;) {
        if (z.avail_in == 0) {
            size_t n = fread(in, 1, IDX_SCRATCH, fp);
            if (n == 0)
                break; /* the end of the file inside a member: gzread reported it */
            read_total += n;
            z.next_in = in;
            z.avail_in = (uInt)n;
        }
        z.next_out = out;
        z.avail_out = IDX_SCRATCH;
        ret = inflate(&z, Z_NO_FLUSH);
        if (ret != Z_STREAM_END && ret != Z_OK && ret != Z_BUF_ERROR)
            break; /* corrupt data: gzread reported it */
        if (ret != Z_STREAM_END)
            continue;
        uint64_t end = read_total - z.avail_in; /* where the member ended */
        unsigned char next[2];
        size_t got;
        if (fseeko(fp, (off_t)end, SEEK_SET) != 0)
            break;
        got = fread(next, 1, 2, fp);
        if (got == 0)
            break; /* the file ends with the member */
        if (got < 2 || next[0] != 0x1f || next[1] != 0x8b) {
            st = ffnn_fail(FFNN_ERR_FORMAT, "%s: compressed byte offset %llu: expected the "
                           "end of the file after the gzip stream, found %llu trailing "
                           "byte%s that are not gzip data", f->path, (unsigned long long)end,
                           (unsigned long long)(f->file_size - end),
                           f->file_size - end == 1 ? "" : "s");
            break;
        }
        if (fseeko(fp, (off_t)end, SEEK_SET) != 0 || inflateReset(&z) != Z_OK)
            break;
        read_total = end;
        z.avail_in = 0;
    }
    inflateEnd(&z);
done:
    if (fp)
        fclose(fp);
    free(in);
    return st;
}

/* A one-member gzip file (the usual case) ends with its trailer, the CRC-32 and
 * length mod 2^32 of all the data (header and payload [f->payload]): when the
 * last 8 bytes are that, nothing follows the stream; otherwise (several
 * members, or trailing bytes) the members are walked (idx_gzip_walk). */
static ffnn_status idx_check_gzip_end(const idx_file *f, const uint8_t *payload)
{
    uint8_t head[4 + 4 * IDX_MAX_DIMS], tail[8];
    size_t hn = 4;
    uLong crc;
    FILE *fp;
    int tail_ok = 0;

    if (!f->gzip)
        return FFNN_OK;
    head[0] = head[1] = 0, head[2] = 8, head[3] = (uint8_t)f->ndims;
    for (int i = 0; i < f->ndims; i++, hn += 4)
        for (int k = 0; k < 4; k++)
            head[hn + (size_t)k] = (uint8_t)(f->dims[i] >> (24 - 8 * k));
    crc = crc32(crc32(0L, Z_NULL, 0), head, (uInt)hn);
    for (uint64_t done = 0; done < f->payload;) {
        uint64_t n = f->payload - done < IDX_READ_CHUNK ? f->payload - done : IDX_READ_CHUNK;
        crc = crc32(crc, payload + done, (uInt)n);
        done += n;
    }
    if ((fp = fopen(f->path, "rb")) != NULL) {
        uint64_t total = hn + f->payload;
        if (fseeko(fp, -8, SEEK_END) == 0 && fread(tail, 1, 8, fp) == 8) {
            uint32_t c = (uint32_t)tail[0] | (uint32_t)tail[1] << 8 | (uint32_t)tail[2] << 16 |
                         (uint32_t)tail[3] << 24;
            uint32_t z = (uint32_t)tail[4] | (uint32_t)tail[5] << 8 | (uint32_t)tail[6] << 16 |
                         (uint32_t)tail[7] << 24;
            tail_ok = c == (uint32_t)crc && z == (uint32_t)total;
        }
        fclose(fp);
    }
    return tail_ok ? FFNN_OK : idx_gzip_walk(f);
}

/* Read the payload into dst [f->payload] and check that nothing follows it. */
static ffnn_status idx_read_payload(idx_file *f, uint8_t *dst)
{
    uint64_t start = f->offset, got;
    uint8_t extra;
    char dims[64];
    ffnn_status st = idx_read(f, dst, f->payload, &got);

    if (st != FFNN_OK)
        return st;
    idx_dims_text(f, dims, sizeof dims);
    if (got < f->payload)
        return idx_fail(f, f->offset, FFNN_ERR_FORMAT,
                        "expected %llu bytes of %s data (%s) from offset %llu, found end of "
                        "file after %llu of them (truncated payload)", (unsigned long long)f->payload,
                        f->what, dims, (unsigned long long)start, (unsigned long long)got);
    st = idx_read(f, &extra, 1, &got); /* also makes zlib check the gzip CRC */
    if (st == FFNN_OK && got != 0)
        st = idx_fail(f, start + f->payload, FFNN_ERR_FORMAT,
                      "expected end of data after the %llu-byte payload (%s), found trailing "
                      "bytes", (unsigned long long)f->payload, dims);
    if (st == FFNN_OK)
        st = idx_check_gzip_end(f, dst);
    return st;
}

/* The image and label counts must agree. */
static ffnn_status idx_check_counts(const idx_file *img, const idx_file *lbl)
{
    if (img->dims[0] == lbl->dims[0])
        return FFNN_OK;
    return ffnn_fail(FFNN_ERR_FORMAT,
                     "%s and %s: offset 4: expected equal counts, found %lu images and %lu "
                     "labels", img->path, lbl->path, (unsigned long)img->dims[0],
                     (unsigned long)lbl->dims[0]);
}

/* classes = largest label + 1. */
static int idx_classes(const ffnn_dataset *ds)
{
    int max = 0;
    for (size_t i = 0; i < ds->count; i++)
        if (ds->labels[i] > max)
            max = ds->labels[i];
    return max + 1;
}

/* Both headers, then the allocation, then both payloads. Without a label file
 * (lbl->path NULL) the labels are all 0. */
static ffnn_status idx_load(idx_file *img, idx_file *lbl, ffnn_dataset **ds)
{
    ffnn_status st = idx_open_header(img);

    if (st == FFNN_OK && lbl->path)
        st = idx_open_header(lbl);
    if (st == FFNN_OK && lbl->path)
        st = idx_check_counts(img, lbl);
    if (st == FFNN_OK)
        st = idx_count_payload(img);
    if (st == FFNN_OK) {
        char detail[64];
        idx_dims_text(img, detail, sizeof detail);
        st = ffnn_memory_check_host(img->path, img->payload + 4 * img->dims[0], detail);
    }
    if (st == FFNN_OK)
        st = ffnn_dataset_alloc(img->dims[0], img->dims[1], img->dims[2], ds);
    if (st == FFNN_OK)
        st = idx_read_payload(img, (*ds)->images);
    if (st == FFNN_OK && lbl->path) {
        /* one byte per label in the file, int32 in the data set: read the bytes
         * into the end of the label array, then widen them front to back */
        uint8_t *bytes = (uint8_t *)(*ds)->labels + 3 * (*ds)->count;
        st = idx_read_payload(lbl, bytes);
        for (size_t i = 0; st == FFNN_OK && i < (*ds)->count; i++)
            (*ds)->labels[i] = bytes[i];
    } else if (st == FFNN_OK) {
        memset((*ds)->labels, 0, (*ds)->count * sizeof *(*ds)->labels);
    }
    return st;
}

/* Load an IDX image file and its label file (see ffnn.h). */
ffnn_status ffnn_dataset_load_idx(const char *images_path, const char *labels_path,
                                  ffnn_dataset **out)
{
    idx_file img = idx_file_init(images_path, "image", 3);
    idx_file lbl = idx_file_init(labels_path, "label", 1);
    ffnn_dataset *ds = NULL;
    ffnn_status st;

    if (!images_path || !out)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_dataset_load_idx: NULL argument");
    st = idx_load(&img, &lbl, &ds);
    idx_close(&img);
    idx_close(&lbl);
    if (st != FFNN_OK) {
        ffnn_dataset_free(ds);
        return st;
    }
    ds->classes = idx_classes(ds);
    *out = ds;
    return FFNN_OK;
}

/* ------------------------------------------------------------ directories */

/* "dir/name" + suffix in a new string (NULL when out of memory). */
static char *idx_join(const char *dir, const char *name, const char *suffix)
{
    size_t n;
    const char *sep;
    char *path;

    if (dir[0] == '\0')
        dir = ".";
    sep = dir[strlen(dir) - 1] == '/' ? "" : "/";
    n = strlen(dir) + strlen(sep) + strlen(name) + strlen(suffix) + 1;
    path = malloc(n);
    if (path)
        snprintf(path, n, "%s%s%s%s", dir, sep, name, suffix);
    return path;
}

/* 1 when path names something (stat works, or fails for a reason other than
 * absence, which the loader will then report). */
static int idx_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 || (errno != ENOENT && errno != ENOTDIR);
}

/* *path = "dir/name" if it exists, else "dir/name.gz" if that exists (caller frees). */
static ffnn_status idx_find(const char *dir, const char *name, char **path)
{
    char *raw = idx_join(dir, name, ""), *gz = idx_join(dir, name, ".gz");
    ffnn_status st = FFNN_OK;

    if (!raw || !gz)
        st = ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for a path under %s", dir);
    else if (idx_exists(raw))
        *path = raw, raw = NULL;
    else if (idx_exists(gz))
        *path = gz, gz = NULL;
    else
        st = ffnn_fail(FFNN_ERR_IO, "no %s in %s: tried %s and %s", name, dir, raw, gz);
    free(raw);
    free(gz);
    return st;
}

/* Load the pair <prefix>-images-idx3-ubyte[.gz] / <prefix>-labels-idx1-ubyte[.gz]. */
static ffnn_status idx_load_pair(const char *dir, const char *prefix, ffnn_dataset **out)
{
    char images[64], labels[64];
    char *images_path = NULL, *labels_path = NULL;
    ffnn_status st;

    snprintf(images, sizeof images, "%s-images-idx3-ubyte", prefix);
    snprintf(labels, sizeof labels, "%s-labels-idx1-ubyte", prefix);
    st = idx_find(dir, images, &images_path);
    if (st == FFNN_OK)
        st = idx_find(dir, labels, &labels_path);
    if (st == FFNN_OK)
        st = ffnn_dataset_load_idx(images_path, labels_path, out);
    free(images_path);
    free(labels_path);
    return st;
}

/* Train and test sets must have the same image shape. */
static ffnn_status idx_check_shapes(const char *dir, const ffnn_dataset *train,
                                    const ffnn_dataset *test)
{
    if (train->rows == test->rows && train->cols == test->cols)
        return FFNN_OK;
    return ffnn_fail(FFNN_ERR_FORMAT,
                     "%s: expected test images of the training images' shape %zu x %zu, "
                     "found %zu x %zu", dir, train->rows, train->cols, test->rows, test->cols);
}

/* Load the training pair ("train-") into *train and the test pair ("t10k-") into
 * *test; either output may be NULL. Outputs are untouched on error. */
ffnn_status ffnn_dataset_load_idx_dir(const char *dir, ffnn_dataset **train,
                                      ffnn_dataset **test)
{
    ffnn_dataset *tr = NULL, *te = NULL;
    ffnn_status st = FFNN_OK;

    if (!dir)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_dataset_load_idx_dir: dir is NULL");
    if (train)
        st = idx_load_pair(dir, "train", &tr);
    if (st == FFNN_OK && test)
        st = idx_load_pair(dir, "t10k", &te);
    if (st == FFNN_OK && tr && te)
        st = idx_check_shapes(dir, tr, te);
    if (st != FFNN_OK) {
        ffnn_dataset_free(tr);
        ffnn_dataset_free(te);
        return st;
    }
    if (train)
        *train = tr;
    if (test)
        *test = te;
    return FFNN_OK;
}
