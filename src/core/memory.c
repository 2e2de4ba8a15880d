/* memory.c - host memory available to this process and the refusal message
 * (memory.h). Linux: /proc/meminfo MemAvailable, the cgroup v2 limit of the
 * process's cgroup (/sys/fs/cgroup/memory.max, memory.current) and the address
 * space / data rlimits; each source that cannot be read is left out. */
#define _POSIX_C_SOURCE 200809L
#include "core/memory.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

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

uint64_t ffnn_host_memory_available(void)
{
    uint64_t avail = UINT64_MAX, v;
    struct rlimit rl;

    if ((v = read_number("/proc/meminfo", "MemAvailable:", 1024)) > 0)
        avail = v;
    uint64_t max = read_number("/sys/fs/cgroup/memory.max", NULL, 1);
    uint64_t used = read_number("/sys/fs/cgroup/memory.current", NULL, 1);
    if (max > 0 && max > used && max - used < avail) /* "max" (no limit) reads as 0 */
        avail = max - used;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (uint64_t)rl.rlim_cur < avail)
        avail = (uint64_t)rl.rlim_cur;
    if (getrlimit(RLIMIT_DATA, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (uint64_t)rl.rlim_cur < avail)
        avail = (uint64_t)rl.rlim_cur;
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
