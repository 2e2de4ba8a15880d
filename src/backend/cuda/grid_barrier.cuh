/* grid_barrier.cuh - the grid-wide barrier of the persistent strategy (persistent.cu),
 * for a cooperative launch (every block resident): grid_arrive, grid_wait and
 * grid_barrier on one unsigned counter in global memory that starts at 0 and reaches
 * `target` when that many blocks arrived. Its cost is measured by lab/barrier.cu
 * (`ffnn bench barrier`). */
#ifndef FFNN_CUDA_GRID_BARRIER_CUH
#define FFNN_CUDA_GRID_BARRIER_CUH

static __device__ __forceinline__ unsigned ld_acquire(const unsigned *p)
{
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

/* The grid barrier in two halves: every block arrives (grid_arrive), then waits until
 * `target` arrivals in all (grid_wait); the block's threads may work on data of their
 * own in between. The arrival is a release: the block's threads meet (bar.sync), then
 * thread 0 fences at acq_rel strength and adds 1 (red.relaxed), so every write the
 * block made before it is visible at gpu scope to whoever acquires the count. The
 * wait is an acquire: thread 0 spins on ld.acquire.gpu, then bar.sync orders the
 * block's later reads after it (the pattern of CUTLASS's GenericBarrier,
 * cutlass/barrier.h; PTX ISA "Memory Consistency Model": release and acquire
 * patterns, cumulativity). Against __threadfence (fence.sc) before the add and after
 * the spin: 0.95 against 1.08 us a barrier at 128 blocks (H200, docs/RESULTS.md). */
static __device__ __forceinline__ void grid_arrive(unsigned *counter)
{
    __syncthreads();
    if (threadIdx.x == 0)
        asm volatile("fence.acq_rel.gpu;\n\tred.relaxed.gpu.global.add.u32 [%0], 1;"
                     ::"l"(counter) : "memory");
}
static __device__ __forceinline__ void grid_wait(unsigned *counter, unsigned target)
{
    if (threadIdx.x == 0) {
        while (ld_acquire(counter) < target) {
        }
    }
    __syncthreads();
}
static __device__ __forceinline__ void grid_barrier(unsigned *counter, unsigned target)
{
    grid_arrive(counter);
    grid_wait(counter, target);
}

#endif
