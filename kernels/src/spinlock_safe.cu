// spinlock_safe -- a SIMT-safe spin lock: the lock is acquired AND released inside the same
// loop iteration, so the thread that wins the CAS finishes its critical section before the
// loop's back edge; the losers retry.
// ptx-variants: sm_80 sm_70
//
//     while (!done) {
//         if (atomicCAS(lock, 0, 1) == 0) { critical section; __threadfence();
//                                            atomicExch(lock, 0); done = 1; }
//     }
//
// Divergence: the CAS outcome diverges (one winner per round among contending threads); the
// winner's path (critical section + release) lies inside the loop body, before the join, so
// a PDOM stack runs it before reconverging with the spinners and the kernel completes under
// every stack-based mechanism (contrast spinlock_naive). One global lock serialises all
// threads of all CTAs.
//
// Critical section: plain (volatile) read-modify-write of counter[0] += 1 and
// counter[1] += global thread id, protected only by the lock; with mutual exclusion the
// result is exact and independent of the acquisition order.
//
// Launch: grid (2,1,1), block (48,1,1).
// Arguments: lock: int[1] (zero-filled); counter: int[2] (zero-filled output:
//            {number of threads, sum of global thread ids}).

extern "C" __global__ void spinlock_safe(int *lock, int *counter)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    volatile int *vc = counter;
    int done = 0;
    while (!done) {
        if (atomicCAS(lock, 0, 1) == 0) {
            vc[0] = vc[0] + 1;
            vc[1] = vc[1] + tid;
            __threadfence();
            atomicExch(lock, 0);
            done = 1;
        }
    }
}
