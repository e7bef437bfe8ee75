// cuda_compat.h -- names older CUDA programs use that CUDA 13 headers dropped.
#ifndef RECONVERGE_TEST_CUDA_COMPAT_H
#define RECONVERGE_TEST_CUDA_COMPAT_H

#define cudaThreadSynchronize cudaDeviceSynchronize
#define cudaThreadExit cudaDeviceReset

#endif // RECONVERGE_TEST_CUDA_COMPAT_H
