// flag_handoff -- producer/consumer between two paths of one warp: the SIMT deadlock of a flag wait.
// ptx-variants: sm_80
//
// Thread 0 (the producer) writes a value and then raises a flag; threads 1..31 of the same warp (the
// consumers) wait for the flag and then read the value. The branch on the thread index splits the warp
// into the two paths. A mechanism that runs the consumers' path first and does not switch until it
// finishes never runs the producer: the consumers spin forever (a SIMT deadlock). One that runs the
// producer first, or switches between paths (fairness, yield), completes.
//
// Launch: grid (1,1,1), block (32,1,1). Arguments: flag: int[1], data: int[1], out: int[32] (all
// zero-filled). Result: out[0] = 0, out[t] = 42 + t for t = 1..31.

extern "C" __global__ void flag_handoff(volatile int *flag, volatile int *data, int *out)
{
    int t = threadIdx.x;
    if (t == 0) {
        data[0] = 42;            // produce
        __threadfence();
        flag[0] = 1;             // publish
    } else {
        while (flag[0] == 0)     // consume: wait for the flag
            ;
        out[t] = data[0] + t;
    }
}
