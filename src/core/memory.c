/* memory.c - host memory available to this process and the refusal message
 * (memory.h). Linux: /proc/meminfo MemAvailable, the cgroup v2 and v1 limits
 * (memory.max - memory.current; memory.limit_in_bytes - memory.usage_in_bytes)
 * of the namespace's root and of the process's own cgroup, and the address
 * space / data rlimits less what is mapped (/proc/self/statm); each source that
 * cannot be read is left out. */
#define _POSIX_C_SOURCE 200809L
#include "core/memory.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/error.h"

/* The first unsigned number in the file at path (after skipping to key, when
 * key is not NULL), times scale; 0 when it cannot be read. */
static uint64_t read_number(const char *path, const char *key, uint64_t scale)
{
    char line[256];
    uint64_t v = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f)) {
        if (key && strncmp(line, key, strlen(key)) != 0)
            continue;
        const char *p = line + (key ? strlen(key) : 0);
        while (*p == ' ' || *p == '\t')
            p++;
        if (sscanf(p, "%" SCNu64, &v) != 1)
            v = 0;
        break;
    }
    fclose(f);
    return v * scale;
}

/* limit - usage of the cgroup directory dir (files limit_name, usage_name),
 * or UINT64_MAX when there is no limit there (absent, "max", or v1's
 * "unlimited" of about 2^63). */
static uint64_t cgroup_room(const char *dir, const char *limit_name, const char *usage_name)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s", dir, limit_name) >= (int)sizeof path)
        return UINT64_MAX;
    uint64_t max = read_number(path, NULL, 1); /* "max" (no limit) reads as 0 */
    if (max == 0 || max >= (uint64_t)1 << 62)
        return UINT64_MAX;
    snprintf(path, sizeof path, "%s/%s", dir, usage_name);
    uint64_t used = read_number(path, NULL, 1);
    return max > used ? max - used : 0;
}

uint64_t ffnn_cgroup_memory_available(const char *cgroup_root, const char *self_cgroup)
{
    char line[4096], dir[8192];
    uint64_t room = UINT64_MAX, r;
    /* the namespace's root (a container's own cgroup), v2 then v1 */
    snprintf(dir, sizeof dir, "%s", cgroup_root);
    if ((r = cgroup_room(dir, "memory.max", "memory.current")) < room)
        room = r;
    snprintf(dir, sizeof dir, "%s/memory", cgroup_root);
    if ((r = cgroup_room(dir, "memory.limit_in_bytes", "memory.usage_in_bytes")) < room)
        room = r;
    /* this process's own cgroup: "0::/path" (v2), "N:...memory...:/path" (v1) */
    FILE *f = fopen(self_cgroup, "r");
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2 || c2[1] != '/' || !strcmp(c2 + 1, "/"))
            continue;
        *c2 = '\0';
        int v2 = !strcmp(line, "0") && c1 + 1 == c2;
        int v1 = !v2 && (!strcmp(c1 + 1, "memory") || strstr(c1 + 1, "memory,") ||
                         (strlen(c1 + 1) > 7 && !strcmp(c2 - 7, ",memory")));
        if (!v1 && !v2)
            continue;
        snprintf(dir, sizeof dir, "%s%s%s", cgroup_root, v1 ? "/memory" : "", c2 + 1);
        r = v1 ? cgroup_room(dir, "memory.limit_in_bytes", "memory.usage_in_bytes")
               : cgroup_room(dir, "memory.max", "memory.current");
        if (r < room)
            room = r;
    }
    if (f)
        fclose(f);
    return room;
}

uint64_t ffnn_host_memory_available(void)
{
    uint64_t avail = UINT64_MAX, v;
    struct rlimit rl;
    long page = sysconf(_SC_PAGESIZE);
    /* /proc/self/statm: total program size and data + stack, in pages */
    uint64_t vm = 0, data = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        uint64_t fields[6] = {0};
        if (fscanf(f, "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64,
                   &fields[0], &fields[1], &fields[2], &fields[3], &fields[4], &fields[5]) == 6)
            vm = fields[0] * (uint64_t)page, data = fields[5] * (uint64_t)page;
        fclose(f);
    }

    if ((v = read_number("/proc/meminfo", "MemAvailable:", 1024)) > 0)
        avail = v;
    if ((v = ffnn_cgroup_memory_available("/sys/fs/cgroup", "/proc/self/cgroup")) < avail)
        avail = v;
    /* the rlimits count what is mapped already: what is left is the limit less that */
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        v = (uint64_t)rl.rlim_cur > vm ? (uint64_t)rl.rlim_cur - vm : 0;
        if (v < avail)
            avail = v;
    }
    if (getrlimit(RLIMIT_DATA, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        v = (uint64_t)rl.rlim_cur > data ? (uint64_t)rl.rlim_cur - data : 0;
        if (v < avail)
            avail = v;
    }
    return avail;
}

void ffnn_memory_text(uint64_t bytes, char *buf, unsigned size)
{
    if (bytes >= (uint64_t)1 << 30)
        snprintf(buf, size, "%.2f GiB", (double)bytes / (double)((uint64_t)1 << 30));
    else if (bytes >= (uint64_t)1 << 20)
        snprintf(buf, size, "%.1f MiB", (double)bytes / (double)((uint64_t)1 << 20));
    else if (bytes >= 1024)
        snprintf(buf, size, "%.1f KiB", (double)bytes / 1024.0);
    else
        snprintf(buf, size, "%" PRIu64 " bytes", bytes);
}

ffnn_status ffnn_memory_check_host(const char *what, uint64_t need, const char *detail)
{
    char a[32], b[32];
    if (need < FFNN_MEMORY_CHECK_FROM)
        return FFNN_OK;
    uint64_t avail = ffnn_host_memory_available();
    if (need <= avail)
        return FFNN_OK;
    ffnn_memory_text(need, a, sizeof a);
    ffnn_memory_text(avail, b, sizeof b);
    return ffnn_fail(FFNN_ERR_NO_MEMORY, "%s needs an estimated %s of host memory%s%s%s, %s "
                     "available (MemAvailable, cgroup and rlimit): refused before allocating",
                     what, a, detail ? " (" : "", detail ? detail : "", detail ? ")" : "", b);
}

ffnn_status ffnn_memory_check_device(const char *what, uint64_t need, uint64_t available,
                                     const char *device, const char *detail)
{
    char a[32], b[32];
    if (need <= available)
        return FFNN_OK;
    ffnn_memory_text(need, a, sizeof a);
    ffnn_memory_text(available, b, sizeof b);
    return ffnn_fail(FFNN_ERR_NO_MEMORY, "%s needs an estimated %s of %s memory%s%s%s, %s "
                     "free: refused before allocating", what, a, device, detail ? " (" : "",
                     detail ? detail : "", detail ? ")" : "", b);
}

ffnn_status ffnn_memory_check_grow(const char *what, uint64_t have, uint64_t want,
                                   const char *detail)
{
    if (want <= have)
        return FFNN_OK;
    /* realloc may hold the old block and the new one at once; the old one is
     * counted in what is in use already, so the new block is what must fit */
    return ffnn_memory_check_host(what, want, detail);
}
