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
 * /proc/meminfo's MemAvailable, a cgroup v2 limit (memory.max - memory.current)
 * and the RLIMIT_AS / RLIMIT_DATA limits (as a whole, not minus what is in use);
 * UINT64_MAX when none of these can be read (then nothing is refused). */
uint64_t ffnn_host_memory_available(void);

/* Refuse what needs more host memory than there is: FFNN_OK when need <
 * FFNN_MEMORY_CHECK_FROM or fits, else FFNN_ERR_NO_MEMORY with "WHAT needs an
 * estimated N GiB of host memory (DETAIL), M GiB available". */
ffnn_status ffnn_memory_check_host(const char *what, uint64_t need, const char *detail);

/* The same for a device: need against available (bytes, from the backend). */
ffnn_status ffnn_memory_check_device(const char *what, uint64_t need, uint64_t available,
                                     const char *device, const char *detail);

/* bytes as "1.23 GiB" / "456 MiB" / "789 KiB" / "12 bytes" into buf [size]. */
void ffnn_memory_text(uint64_t bytes, char *buf, unsigned size);

#endif
