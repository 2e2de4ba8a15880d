/* memory.h - memory estimates before allocation (memory.c): how much host
 * memory this process can still use, and the one refusal message, so that a
 * network, data set or file that would need more than there is is refused with
 * the estimate instead of ending in the OOM killer. */
#ifndef FFNN_CORE_MEMORY_H
#define FFNN_CORE_MEMORY_H

#include <stdint.h>

#include "ffnn.h"

/* Requests below this many bytes are not checked (reading /proc costs more). */
#define FFNN_MEMORY_CHECK_FROM ((uint64_t)64 << 20)

/* The host memory this process can still allocate, in bytes: the least of
 * /proc/meminfo's MemAvailable, the cgroup limits (ffnn_cgroup_memory_available:
 * v2 and v1) and the RLIMIT_AS / RLIMIT_DATA limits less the address space /
 * data already mapped (/proc/self/statm); UINT64_MAX when none of these can be
 * read (then nothing is refused). Reads a few /proc and /sys files: call it per
 * large allocation, not per row. */
uint64_t ffnn_host_memory_available(void);

/* The least room (limit - usage, bytes) of the memory cgroups that bound this
 * process, UINT64_MAX when none is limited: under cgroup_root ("/sys/fs/cgroup")
 * the namespace's root (v2 memory.max/memory.current, v1
 * memory/memory.limit_in_bytes/memory.usage_in_bytes) and the process's own
 * cgroup named in self_cgroup ("/proc/self/cgroup": "0::/path" for v2,
 * "N:memory:/path" for v1). The paths are arguments so tests can give a tree. */
uint64_t ffnn_cgroup_memory_available(const char *cgroup_root, const char *self_cgroup);

/* Refuse what needs more host memory than there is: FFNN_OK when need <
 * FFNN_MEMORY_CHECK_FROM or fits, else FFNN_ERR_NO_MEMORY with "WHAT needs an
 * estimated N GiB of host memory (DETAIL), M GiB available". */
ffnn_status ffnn_memory_check_host(const char *what, uint64_t need, const char *detail);

/* A buffer of have bytes is about to grow to want bytes (a reader that cannot
 * know the size before it has read the input: a decompressed stream, stdin):
 * FFNN_OK when want <= have or the new block fits (ffnn_memory_check_host, from
 * FFNN_MEMORY_CHECK_FROM up), else FFNN_ERR_NO_MEMORY "WHAT needs an estimated
 * N of host memory (DETAIL), M available: refused before allocating". Call it
 * before each realloc of such a buffer. */
ffnn_status ffnn_memory_check_grow(const char *what, uint64_t have, uint64_t want,
                                   const char *detail);

/* The same for a device: need against available (bytes, from the backend). */
ffnn_status ffnn_memory_check_device(const char *what, uint64_t need, uint64_t available,
                                     const char *device, const char *detail);

/* bytes as "1.23 GiB" / "456 MiB" / "789 KiB" / "12 bytes" into buf [size]. */
void ffnn_memory_text(uint64_t bytes, char *buf, unsigned size);

#endif
