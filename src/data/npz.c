/*
 * npz.c - one member of a NumPy .npz file (a zip archive of .npy files, as
 * numpy.savez and numpy.savez_compressed write them), read into memory for
 * npy.c. The zip format (PKWARE APPNOTE 6.3): the end-of-central-directory
 * record, the central directory's entries (name, method, sizes, CRC-32, local
 * header offset), the local header, then the member's bytes, stored (method 0)
 * or deflated (method 8, inflated with zlib). Every offset and size is checked
 * against the file before it is used; the CRC-32 of the member is verified.
 * ZIP64 archives (over 4 GiB or 65535 members) are refused.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/error.h"
#include "core/memory.h"
#include "data/dataset.h"

static uint32_t get16(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The whole file into *buf [*size]. */
static ffnn_status read_all(const char *path, unsigned char **buf, size_t *size)
{
    FILE *f = fopen(path, "rb");
    long n;
    if (!f)
        return ffnn_fail(FFNN_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return ffnn_fail(FFNN_ERR_IO, "%s: cannot seek: %s", path, strerror(errno));
    }
    *buf = malloc(n ? (size_t)n : 1);
    if (!*buf) {
        fclose(f);
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "%s: out of memory for %ld bytes", path, n);
    }
    size_t got = fread(*buf, 1, (size_t)n, f);
    fclose(f);
    if (got != (size_t)n) {
        free(*buf);
        return ffnn_fail(FFNN_ERR_IO, "%s: cannot read: %s", path, strerror(errno));
    }
    *size = (size_t)n;
    return FFNN_OK;
}

/* The member's bytes at data [comp] (method 0 or 8) into *out [uncomp]. */
static ffnn_status extract(const char *path, const char *name, uint32_t method,
                           const unsigned char *data, size_t comp, size_t uncomp,
                           uint32_t crc, unsigned char **out)
{
    /* the sizes are checked before the allocation: stored, they are equal;
     * deflate expands at most 1032:1 (RFC 1951: 258 bytes from 2 bits) */
    if (method == 0 && comp != uncomp)
        return ffnn_fail(FFNN_ERR_FORMAT, "%s: %s: a stored member of %zu bytes claims %zu "
                         "uncompressed", path, name, comp, uncomp);
    if (method == 8 && uncomp / 1032 > comp + 1)
        return ffnn_fail(FFNN_ERR_FORMAT, "%s: %s: %zu deflated bytes claim %zu uncompressed "
                         "(more than deflate's 1032:1)", path, name, comp, uncomp);
    ffnn_status st = ffnn_memory_check_host(path, uncomp, "an .npz member");
    if (st != FFNN_OK)
        return st;
    unsigned char *b = malloc(uncomp ? uncomp : 1);
    if (!b)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "%s: %s: out of memory for %zu bytes", path, name,
                         uncomp);
    if (method == 0) {
        memcpy(b, data, comp);
    } else {
        z_stream z;
        memset(&z, 0, sizeof z);
        int rc = inflateInit2(&z, -MAX_WBITS);
        size_t done = 0;
        if (rc == Z_OK) {
            z.next_in = (unsigned char *)data;
            z.avail_in = (uInt)comp;
            z.next_out = b;
            z.avail_out = (uInt)uncomp;
            rc = inflate(&z, Z_FINISH);
            done = z.total_out;
            inflateEnd(&z);
        }
        if (rc != Z_STREAM_END || done != uncomp) {
            free(b);
            return ffnn_fail(FFNN_ERR_FORMAT, "%s: %s: expected a deflate stream of %zu bytes, "
                             "found %s", path, name, uncomp,
                             rc == Z_STREAM_END ? "another size" : "a corrupt one");
        }
    }
    if (crc32(crc32(0L, Z_NULL, 0), b, (uInt)uncomp) != crc) {
        free(b);
        return ffnn_fail(FFNN_ERR_FORMAT, "%s: %s: CRC-32 mismatch (a corrupt archive)", path,
                         name);
    }
    *out = b;
    return FFNN_OK;
}

ffnn_status ffnn_npz_member(const char *path, const char *const *names, unsigned char **out,
                            size_t *out_size, const char **found)
{
    unsigned char *z = NULL;
    size_t size = 0;
    ffnn_status st = read_all(path, &z, &size);
    if (st != FFNN_OK)
        return st;
    /* the end-of-central-directory record: 22 bytes + a comment of up to 65535 */
    size_t eocd = SIZE_MAX;
    for (size_t back = 22; back <= size && back <= 22 + 65535; back++)
        if (get32(z + size - back) == 0x06054b50) {
            eocd = size - back;
            break;
        }
    if (eocd == SIZE_MAX) {
        free(z);
        return ffnn_fail(FFNN_ERR_FORMAT, "%s: expected a zip archive (.npz: numpy.savez), found "
                         "no end-of-central-directory record", path);
    }
    uint32_t entries = get16(z + eocd + 10), cd_size = get32(z + eocd + 12);
    uint32_t cd_at = get32(z + eocd + 16);
    if (cd_at == 0xFFFFFFFFu || entries == 0xFFFFu || (uint64_t)cd_at + cd_size > eocd) {
        free(z);
        return ffnn_fail(FFNN_ERR_FORMAT, "%s: offset %zu: expected a central directory within "
                         "the file (ZIP64 archives are not read), found offset %u size %u", path,
                         eocd, cd_at, cd_size);
    }
    size_t at = cd_at;
    for (uint32_t e = 0; e < entries; e++) {
        if (at + 46 > (size_t)cd_at + cd_size || get32(z + at) != 0x02014b50) {
            free(z);
            return ffnn_fail(FFNN_ERR_FORMAT, "%s: offset %zu: expected central directory entry "
                             "%u of %u", path, at, e + 1, entries);
        }
        uint32_t method = get16(z + at + 10), crc = get32(z + at + 16);
        uint32_t comp = get32(z + at + 20), uncomp = get32(z + at + 24);
        uint32_t nlen = get16(z + at + 28), xlen = get16(z + at + 30), clen = get16(z + at + 32);
        uint32_t local = get32(z + at + 42);
        const char *name = (const char *)z + at + 46;
        if (at + 46 + nlen > (size_t)cd_at + cd_size) {
            free(z);
            return ffnn_fail(FFNN_ERR_FORMAT, "%s: offset %zu: a member name past the central "
                             "directory", path, at);
        }
        for (int k = 0; names[k]; k++) {
            if (strlen(names[k]) != nlen || memcmp(name, names[k], nlen) != 0)
                continue;
            if ((method != 0 && method != 8) || comp == 0xFFFFFFFFu || uncomp == 0xFFFFFFFFu ||
                (uint64_t)local + 30 > cd_at || get32(z + local) != 0x04034b50) {
                free(z);
                return ffnn_fail(FFNN_ERR_FORMAT, "%s: %s: expected a stored or deflated member "
                                 "with a local header (method %u)", path, names[k], method);
            }
            uint64_t data = (uint64_t)local + 30 + get16(z + local + 26) + get16(z + local + 28);
            if (data + comp > cd_at) {
                free(z);
                return ffnn_fail(FFNN_ERR_FORMAT, "%s: %s: expected %u bytes of data at offset "
                                 "%llu, found the end of the members", path, names[k], comp,
                                 (unsigned long long)data);
            }
            st = extract(path, names[k], method, z + data, comp, uncomp, crc, out);
            free(z);
            if (st == FFNN_OK) {
                *out_size = uncomp;
                *found = names[k];
            }
            return st;
        }
        at += 46 + (size_t)nlen + xlen + clen;
    }
    free(z);
    *out = NULL; /* no such member */
    *out_size = 0;
    *found = NULL;
    return FFNN_OK;
}
