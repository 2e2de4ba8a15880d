/* atomic_file.c - write a temporary file next to the target, fsync, rename,
 * fsync the directory (see atomic_file.h). Also: the target's mode is kept, a
 * symbolic link is written through unless another account could have planted
 * it (the protected_symlinks rule), stale temporary files of dead processes
 * are removed, and the temporary files in flight are listed for
 * ffnn_remove_temporary_files (a signal handler's last call). */
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700 /* realpath */
#endif
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "io/atomic_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"

enum {
    TMP_RANDOM_CHARS = 6,
    TMP_PID_CHARS = 20,                /* room for "<pid>-" */
    TMP_ATTEMPTS = 100,                /* names tried before giving up (EEXIST) */
    TMP_IN_FLIGHT = 8,                 /* temporary files open at once, per process */
    WRITE_CHUNK = 1 << 30              /* bytes per write() call */
};
static const char tmp_infix[] = ".tmp-";

struct ffnn_atomic_file {
    const char *path; /* the target as given                          */
    char *target;     /* the file replaced: path, or what its symlink names */
    char *tmp;        /* "<target>.tmp-<pid>-XXXXXX", malloc'd         */
    int fd;           /* the temporary file; -1 when closed            */
    int created;      /* 1 while the temporary file exists on disk     */
    int slot;         /* its index in in_flight, or -1                 */
    uint64_t offset;  /* bytes written so far                          */
};

/* The temporary files this process is writing, for ffnn_remove_temporary_files:
 * a process-wide list by nature (a signal handler has no other way to find
 * them); each slot is claimed and released atomically. */
static char *volatile in_flight[TMP_IN_FLIGHT];

static void in_flight_add(ffnn_atomic_file *af)
{
    af->slot = -1;
    for (int i = 0; i < TMP_IN_FLIGHT; i++) {
        char *expected = NULL;
        if (__atomic_compare_exchange_n((char **)&in_flight[i], &expected, af->tmp, 0,
                                        __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
            af->slot = i;
            return;
        }
    }
}

static void in_flight_remove(ffnn_atomic_file *af)
{
    if (af->slot >= 0)
        __atomic_store_n((char **)&in_flight[af->slot], NULL, __ATOMIC_SEQ_CST);
    af->slot = -1;
}

void ffnn_remove_temporary_files(void)
{
    for (int i = 0; i < TMP_IN_FLIGHT; i++) {
        char *tmp = __atomic_exchange_n((char **)&in_flight[i], NULL, __ATOMIC_SEQ_CST);
        if (tmp)
            unlink(tmp); /* async-signal-safe */
    }
}

/* splitmix64's output function: a well-mixed 64-bit value from z. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* af->tmp = target + ".tmp-" + pid + "-" + 6 characters drawn from r. */
static void tmp_name(ffnn_atomic_file *af, uint64_t r)
{
    static const char alphabet[] =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    size_t n = (size_t)sprintf(af->tmp, "%s%s%ld-", af->target, tmp_infix, (long)getpid());

    for (int i = 0; i < TMP_RANDOM_CHARS; i++) {
        af->tmp[n + (size_t)i] = alphabet[r % (sizeof alphabet - 1)];
        r /= sizeof alphabet - 1;
    }
    af->tmp[n + TMP_RANDOM_CHARS] = '\0';
}

int ffnn_symlink_follow_allowed(unsigned link_uid, unsigned dir_mode, unsigned dir_uid,
                                unsigned euid)
{
    if ((dir_mode & (S_ISVTX | S_IWOTH)) != (S_ISVTX | S_IWOTH))
        return 1; /* not a sticky world-writable directory */
    return link_uid == euid || link_uid == dir_uid;
}

ffnn_status ffnn_check_path_links(const char *path, int *final_is_link)
{
    size_t n = strlen(path);
    char *prefix = malloc(n + 2);
    ffnn_status st = FFNN_OK;

    if (final_is_link)
        *final_is_link = 0;
    if (!prefix)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "%s: out of memory", path);
    /* every prefix that ends a component: "/tmp", "/tmp/a", "/tmp/a/m.safetensors" */
    for (size_t end = 1; end <= n && st == FFNN_OK; end++) {
        struct stat link, dir;
        if (end < n && !(path[end] == '/' && path[end - 1] != '/'))
            continue;
        if (path[end - 1] == '/')
            continue;
        memcpy(prefix, path, end);
        prefix[end] = '\0';
        if (lstat(prefix, &link) != 0 || !S_ISLNK(link.st_mode))
            continue;
        if (end == n && final_is_link)
            *final_is_link = 1;
        char *slash = strrchr(prefix, '/'); /* the directory holding the link */
        if (!slash)
            strcpy(prefix, ".");
        else if (slash == prefix)
            prefix[1] = '\0';
        else
            *slash = '\0';
        if (stat(prefix, &dir) == 0 &&
            !ffnn_symlink_follow_allowed((unsigned)link.st_uid, (unsigned)dir.st_mode,
                                         (unsigned)dir.st_uid, (unsigned)geteuid()))
            st = ffnn_fail(FFNN_ERR_IO, "%s: refused to write through the symbolic link %.*s: "
                           "it belongs to uid %u, in the sticky world-writable directory %s "
                           "(of uid %u), so another account could have planted it (the rule "
                           "of Linux's fs.protected_symlinks): remove the link or write "
                           "elsewhere", path, (int)end, path, (unsigned)link.st_uid, prefix,
                           (unsigned)dir.st_uid);
    }
    free(prefix);
    return st;
}

/* af->target: the file to replace. path itself, or, when path is a symbolic
 * link, the file it names (the link is kept and written through) - unless a
 * link on the way was planted by another account (ffnn_check_path_links).
 * Not a directory (checked before anything is written). */
static ffnn_status resolve_target(ffnn_atomic_file *af)
{
    const char *path = af->path;
    struct stat st;
    size_t n = strlen(path);
    int is_link = 0;
    ffnn_status status;

    if (n == 0)
        return ffnn_fail(FFNN_ERR_IO, "cannot write: expected a file name, found an empty "
                         "path");
    if (path[n - 1] == '/' || (stat(path, &st) == 0 && S_ISDIR(st.st_mode)))
        return ffnn_fail(FFNN_ERR_IO, "%s: cannot write: expected a file name, found a "
                         "directory", path);
    if (n + sizeof tmp_infix + TMP_PID_CHARS + TMP_RANDOM_CHARS >= PATH_MAX)
        return ffnn_fail(FFNN_ERR_IO, "a path of %zu characters (%.60s...): too long: with "
                         "the temporary suffix \".tmp-<pid>-XXXXXX\" it exceeds PATH_MAX (%d)",
                         n, path, PATH_MAX);
    if ((status = ffnn_check_path_links(path, &is_link)) != FFNN_OK)
        return status;
    if (is_link) {
        af->target = realpath(path, NULL);
        if (!af->target)
            return ffnn_fail(FFNN_ERR_IO, "%s: cannot write through the symbolic link: %s "
                             "(a link to a missing file or directory is not followed)", path,
                             strerror(errno));
    } else {
        /* not a link now: one planted after this check is replaced by the rename,
         * not followed */
        af->target = malloc(n + 1);
        if (!af->target)
            return ffnn_fail(FFNN_ERR_NO_MEMORY, "%s: out of memory", path);
        memcpy(af->target, path, n + 1);
    }
    return FFNN_OK;
}

/* 1 when name (in the target's directory) is "<base>.tmp-<pid>-XXXXXX" of a
 * process that no longer runs. */
static int stale_temp(const char *name, const char *base, size_t base_len)
{
    const char *p = name + base_len + sizeof tmp_infix - 1;
    char *end = NULL;
    long pid;

    if (strncmp(name, base, base_len) != 0 ||
        strncmp(name + base_len, tmp_infix, sizeof tmp_infix - 1) != 0 || *p < '1' || *p > '9')
        return 0;
    errno = 0;
    pid = strtol(p, &end, 10);
    if (errno || *end != '-' || strlen(end + 1) != TMP_RANDOM_CHARS || pid == (long)getpid())
        return 0;
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Remove the temporary files of the target left by killed processes (names
 * with the pid of a process that no longer runs; see atomic_file.h). */
static void remove_stale_temps(const ffnn_atomic_file *af)
{
    const char *slash = strrchr(af->target, '/');
    const char *base = slash ? slash + 1 : af->target;
    size_t dir_len = slash ? (size_t)(slash - af->target) : 0;
    char *dir = malloc(dir_len + 2), *victim;
    DIR *d;
    struct dirent *e;

    if (!dir)
        return;
    if (!slash)
        strcpy(dir, ".");
    else if (dir_len == 0)
        strcpy(dir, "/");
    else {
        memcpy(dir, af->target, dir_len);
        dir[dir_len] = '\0';
    }
    d = opendir(dir);
    while (d && (e = readdir(d)) != NULL) {
        if (!stale_temp(e->d_name, base, strlen(base)))
            continue;
        victim = malloc(strlen(dir) + strlen(e->d_name) + 2);
        if (victim) {
            sprintf(victim, "%s/%s", dir, e->d_name);
            unlink(victim);
            free(victim);
        }
    }
    if (d)
        closedir(d);
    free(dir);
}

/* Create the temporary file with O_EXCL under a fresh random name. Like
 * mkstemp, but with the mode of the file it replaces, or 0666 & ~umask (what
 * fopen gives) for a new file, instead of 0600. */
static ffnn_status open_temp(ffnn_atomic_file *af)
{
    struct timespec ts;
    struct stat old;
    uint64_t seed;
    int keep_mode = stat(af->target, &old) == 0 && S_ISREG(old.st_mode);

    af->tmp = malloc(strlen(af->target) + sizeof tmp_infix + TMP_PID_CHARS + TMP_RANDOM_CHARS);
    if (!af->tmp)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "%s: out of memory naming a temporary file",
                         af->path);
    clock_gettime(CLOCK_REALTIME, &ts);
    seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^
           ((uint64_t)getpid() << 40) ^ (uint64_t)(uintptr_t)af;
    for (int attempt = 0; attempt < TMP_ATTEMPTS; attempt++) {
        tmp_name(af, mix64(seed + (uint64_t)attempt * 0x9E3779B97F4A7C15ull));
        /* named to the signal handler before the file exists: a second signal
         * between open and the registration would leave the file behind (seen as
         * a flaky faults_second_sigint_exits_at_once); unlinking a name not yet
         * created is harmless, and the name carries this process's pid */
        in_flight_add(af);
        af->fd = open(af->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                      keep_mode ? old.st_mode & 0777 : 0666);
        if (af->fd < 0)
            in_flight_remove(af);
        if (af->fd >= 0) {
            af->created = 1;
            if (keep_mode && fchmod(af->fd, old.st_mode & 07777) != 0)
                return ffnn_fail(FFNN_ERR_IO, "%s: cannot give the temporary file %s the "
                                 "mode %04o of the file it replaces: %s", af->path, af->tmp,
                                 (unsigned)(old.st_mode & 07777), strerror(errno));
            return FFNN_OK;
        }
        if (errno != EEXIST)
            break;
    }
    return ffnn_fail(FFNN_ERR_IO, "%s: cannot create the temporary file %s: %s%s", af->path,
                     af->tmp, strerror(errno),
                     errno == ENAMETOOLONG ? " (the file name plus the temporary suffix "
                                             "\".tmp-<pid>-XXXXXX\" is too long: use a "
                                             "shorter name)" : "");
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
    if (rename(af->tmp, af->target) != 0)
        return ffnn_fail(FFNN_ERR_IO, "%s: renaming the temporary file %s over it: %s (%s "
                         "left unchanged)", af->path, af->tmp, strerror(errno), af->path);
    af->created = 0;
    in_flight_remove(af);
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
    in_flight_remove(af);
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
    ffnn_atomic_file af = {path, NULL, NULL, -1, 0, -1, 0};
    ffnn_status st;

    if (!path || !fill)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_atomic_write: NULL argument");
    st = resolve_target(&af);
    if (st == FFNN_OK) {
        remove_stale_temps(&af);
        st = open_temp(&af);
    }
    if (st == FFNN_OK)
        st = fill(&af, user);
    if (st == FFNN_OK)
        st = sync_close(&af);
    if (st == FFNN_OK)
        st = rename_into_place(&af);
    discard(&af);
    if (st == FFNN_OK)
        st = sync_dir(af.target);
    free(af.tmp);
    free(af.target);
    return st;
}

ffnn_status ffnn_check_output_path(const char *path)
{
    ffnn_atomic_file af = {path, NULL, NULL, -1, 0, -1, 0};
    ffnn_status st;

    if (!path)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_check_output_path: NULL path");
    st = resolve_target(&af);
    if (st == FFNN_OK) {
        remove_stale_temps(&af);
        st = open_temp(&af);
    }
    discard(&af);
    free(af.tmp);
    free(af.target);
    return st;
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
