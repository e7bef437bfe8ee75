// spinlock_naive -- the naive spin lock of docs/mechanism-reference.md (ElTantawy & Aamodt,
// MICRO'16, Fig. 1): SIMT deadlock under a PDOM reconvergence stack.
// ptx-variants: sm_80 sm_70
//
//     while (atomicCAS(mutex, 0, 1) != 0) ;   // B: spin
//     a[1] = a[1] + 1;                        // C: critical section
//     atomicExch(mutex, 0);                   //    release
//
// Divergence: the spin loop's exit is the branch's immediate post-dominator, which is also
// the start of the critical section. Under PDOM (and SSY/SYNC, TBC, CAPRI) the one thread that
// wins the CAS waits at the reconvergence point while its warp-mates keep spinning on a lock
// that will never be released: deadlock. Mechanisms that let the holder run (no
// reconvergence, Volta-style independent scheduling with yields, one thread per warp)
// complete with a[1] == number of threads.
// The __threadfence() before the release (not in the paper's figure) orders the critical
// section's stores before the unlock; it does not change the control flow.
// The PTX keeps this shape: a one-block loop (atom.cas; setp; @p bra to itself) whose
// fall-through is the critical section.
//
// Launch: grid (1,1,1), block (32,1,1).
// Arguments: mutex: int[1] (zero-filled); a: int[2] (zero-filled; a[1] counts entries).

extern "C" __global__ void spinlock_naive(int *mutex, int *a)
{
    while (atomicCAS(mutex, 0, 1) != 0)
        ;
    volatile int *va = a;
    va[1] = va[1] + 1;
    __threadfence();
    atomicExch(mutex, 0);
}
