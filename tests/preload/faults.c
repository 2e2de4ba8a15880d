/* faults.c - an LD_PRELOAD library for the fault tests (tests/test_faults.c):
 * a full disk and a read-only directory without root, tmpfs or mounts.
 *   FFNN_FAULT_WRITE_BUDGET=N   after N bytes written to temporary files of atomic
 *                               saves (names containing ".tmp-"), write() fails
 *                               with ENOSPC
 *   FFNN_FAULT_EROFS_DIR=DIR    open()/openat() that would create or write a file
 *                               whose path starts with DIR fails with EROFS
 * Built by make as $(BUILD)/libffnn_faults.so; never linked into ffnn. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

static long long budget = -2; /* -2: not read yet; -1: no limit */

static int out_of_budget(int fd, size_t n)
{
    char link[64], name[4096];
    if (budget == -2) {
        const char *b = getenv("FFNN_FAULT_WRITE_BUDGET");
        budget = b ? atoll(b) : -1;
    }
    if (budget < 0)
        return 0;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t len = readlink(link, name, sizeof name - 1);
    if (len <= 0)
        return 0;
    name[len] = '\0';
    if (!strstr(name, ".tmp-"))
        return 0;
    if ((long long)n > budget) {
        budget = 0;
        return 1;
    }
    budget -= (long long)n;
    return 0;
}

ssize_t write(int fd, const void *buf, size_t n)
{
    static ssize_t (*real)(int, const void *, size_t);
    if (!real)
        real = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    if (out_of_budget(fd, n)) {
        errno = ENOSPC;
        return -1;
    }
    return real(fd, buf, n);
}

static int read_only(const char *path, int flags)
{
    const char *dir = getenv("FFNN_FAULT_EROFS_DIR");
    return dir && *dir && path && (flags & (O_CREAT | O_WRONLY | O_RDWR | O_TRUNC)) &&
           strncmp(path, dir, strlen(dir)) == 0;
}

/* The body of the open wrappers: the mode (the variadic argument, read when flags
 * has O_CREAT), the real function (found once), EROFS for a read_only path, else
 * the real call with `args` then the mode. */
#define OPEN_BODY(name, real_type, ...)                                                 \
    static real_type real;                                                              \
    mode_t mode = 0;                                                                    \
    if (flags & O_CREAT) {                                                              \
        va_list ap;                                                                     \
        va_start(ap, flags);                                                            \
        mode = (mode_t)va_arg(ap, int);                                                 \
        va_end(ap);                                                                     \
    }                                                                                   \
    if (!real)                                                                          \
        real = (real_type)dlsym(RTLD_NEXT, #name);                                      \
    if (read_only(path, flags)) {                                                       \
        errno = EROFS;                                                                  \
        return -1;                                                                      \
    }                                                                                   \
    return real(__VA_ARGS__, mode)

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);
#define OPEN_WRAPPER(name)                                                              \
    int name(const char *path, int flags, ...) { OPEN_BODY(name, open_fn, path, flags); }
#define OPENAT_WRAPPER(name)                                                            \
    int name(int dirfd, const char *path, int flags, ...)                               \
    {                                                                                   \
        OPEN_BODY(name, openat_fn, dirfd, path, flags);                                 \
    }

OPEN_WRAPPER(open)
OPEN_WRAPPER(open64)
OPENAT_WRAPPER(openat)
OPENAT_WRAPPER(openat64)
