/* atomic_file.c - write a temporary file next to the target, fsync, rename,
 * fsync the directory (see atomic_file.h). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "io/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"

enum {
    TMP_RANDOM_CHARS = 6,
    TMP_ATTEMPTS = 100,                /* names tried before giving up (EEXIST) */
    WRITE_CHUNK = 1 << 30              /* bytes per write() call */
};
static const char tmp_infix[] = ".tmp-";

struct ffnn_atomic_file {
    const char *path; /* the target                                   */
    char *tmp;        /* "<path>.tmp-XXXXXX", malloc'd                 */
    int fd;           /* the temporary file; -1 when closed            */
    int created;      /* 1 while the temporary file exists on disk     */
    uint64_t offset;  /* bytes written so far                          */
};

/* splitmix64's output function: a well-mixed 64-bit value from z. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* af->tmp = path + ".tmp-" + 6 characters drawn from r. */
static void tmp_name(ffnn_atomic_file *af, uint64_t r)
{
    static const char alphabet[] =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    size_t n = strlen(af->path), k = sizeof tmp_infix - 1;

    memcpy(af->tmp, af->path, n);
    memcpy(af->tmp + n, tmp_infix, k);
    for (int i = 0; i < TMP_RANDOM_CHARS; i++) {
        af->tmp[n + k + (size_t)i] = alphabet[r % (sizeof alphabet - 1)];
        r /= sizeof alphabet - 1;
    }
    af->tmp[n + k + TMP_RANDOM_CHARS] = '\0';
}

/* The target must not be a directory (checked before anything is written). */
static ffnn_status check_target(const char *path)
{
    struct stat st;
    size_t n = strlen(path);

    if (n == 0 || path[n - 1] == '/' || (stat(path, &st) == 0 && S_ISDIR(st.st_mode)))
        return ffnn_fail(FFNN_ERR_IO, "%s: cannot write: expected a file name, found a "
                         "directory", path);
    return FFNN_OK;
}

/* Create the temporary file with O_EXCL under a fresh random name. Like
 * mkstemp, but with mode 0666 & ~umask (what fopen gives) instead of 0600. */
static ffnn_status open_temp(ffnn_atomic_file *af)
{
    struct timespec ts;
    uint64_t seed;

    af->tmp = malloc(strlen(af->path) + sizeof tmp_infix + TMP_RANDOM_CHARS);
    if (!af->tmp)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "%s: out of memory naming a temporary file",
                         af->path);
    clock_gettime(CLOCK_REALTIME, &ts);
    seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^
           ((uint64_t)getpid() << 40) ^ (uint64_t)(uintptr_t)af;
    for (int attempt = 0; attempt < TMP_ATTEMPTS; attempt++) {
        tmp_name(af, mix64(seed + (uint64_t)attempt * 0x9E3779B97F4A7C15ull));
        af->fd = open(af->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (af->fd >= 0) {
            af->created = 1;
            return FFNN_OK;
        }
        if (errno != EEXIST)
            break;
    }
    return ffnn_fail(FFNN_ERR_IO, "%s: cannot create the temporary file %s: %s", af->path,
                     af->tmp, strerror(errno));
}

ffnn_status ffnn_atomic_file_write(ffnn_atomic_file *af, const void *bytes, size_t size)
{
    const unsigned char *p = bytes;

    while (size > 0) {
        ssize_t n = write(af->fd, p, size < WRITE_CHUNK ? size : WRITE_CHUNK);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return ffnn_fail(FFNN_ERR_IO,
                             "%s: writing the temporary file %s at byte offset %llu: %s "
                             "(%s left unchanged)", af->path, af->tmp,
                             (unsigned long long)af->offset,
                             n < 0 ? strerror(errno) : "write() made no progress", af->path);
        p += n;
        size -= (size_t)n;
        af->offset += (uint64_t)n;
    }
    return FFNN_OK;
}

uint64_t ffnn_atomic_file_offset(const ffnn_atomic_file *af) { return af->offset; }

/* fsync and close the temporary file. */
static ffnn_status sync_close(ffnn_atomic_file *af)
{
    int rc;

    if (fsync(af->fd) != 0)
        return ffnn_fail(FFNN_ERR_IO, "%s: fsync of the temporary file %s: %s (%s left "
                         "unchanged)", af->path, af->tmp, strerror(errno), af->path);
    rc = close(af->fd);
    af->fd = -1;
    if (rc != 0)
        return ffnn_fail(FFNN_ERR_IO, "%s: closing the temporary file %s: %s (%s left "
                         "unchanged)", af->path, af->tmp, strerror(errno), af->path);
    return FFNN_OK;
}

static ffnn_status rename_into_place(ffnn_atomic_file *af)
{
    if (rename(af->tmp, af->path) != 0)
        return ffnn_fail(FFNN_ERR_IO, "%s: renaming the temporary file %s over it: %s (%s "
                         "left unchanged)", af->path, af->tmp, strerror(errno), af->path);
    af->created = 0;
    return FFNN_OK;
}

/* After a failure: close and remove the temporary file (the message stays). */
static void discard(ffnn_atomic_file *af)
{
    if (af->fd >= 0)
        close(af->fd);
    af->fd = -1;
    if (af->created)
        unlink(af->tmp);
    af->created = 0;
}

/* fsync the directory holding path, so that the rename survives a crash.
 * EINVAL (a file system without directory fsync) is not an error. */
static ffnn_status sync_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 1;
    char *dir = malloc(n + 2);
    ffnn_status st = FFNN_OK;
    int fd;

    if (!dir)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "%s: out of memory", path);
    if (!slash)
        strcpy(dir, ".");
    else if (n == 0)
        strcpy(dir, "/");
    else {
        memcpy(dir, path, n);
        dir[n] = '\0';
    }
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || (fsync(fd) != 0 && errno != EINVAL))
        st = ffnn_fail(FFNN_ERR_IO, "%s: written and renamed, but fsync of its directory "
                       "%s failed: %s", path, dir, strerror(errno));
    if (fd >= 0)
        close(fd);
    free(dir);
    return st;
}

ffnn_status ffnn_atomic_write(const char *path, ffnn_atomic_fill_fn fill, void *user)
{
    ffnn_atomic_file af = {path, NULL, -1, 0, 0};
    ffnn_status st;

    if (!path || !fill)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_atomic_write: NULL argument");
    st = check_target(path);
    if (st == FFNN_OK)
        st = open_temp(&af);
    if (st == FFNN_OK)
        st = fill(&af, user);
    if (st == FFNN_OK)
        st = sync_close(&af);
    if (st == FFNN_OK)
        st = rename_into_place(&af);
    discard(&af);
    free(af.tmp);
    return st == FFNN_OK ? sync_dir(path) : st;
}

typedef struct buffer_view {
    const void *bytes;
    size_t size;
} buffer_view;

static ffnn_status fill_from_buffer(ffnn_atomic_file *af, void *user)
{
    const buffer_view *b = user;
    return ffnn_atomic_file_write(af, b->bytes, b->size);
}

ffnn_status ffnn_atomic_write_buffer(const char *path, const void *bytes, size_t size)
{
    buffer_view b = {bytes, size};

    if (!bytes && size > 0)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_atomic_write_buffer: NULL bytes");
    return ffnn_atomic_write(path, fill_from_buffer, &b);
}
