// extended: f16 tensor-core GEMM C = A * B (n x n, row-major, fp32 accumulate) with
// mma.sync.m16n8k16 straight from global memory; one warp per 16x8 tile of C.
// Needs sm_80+ for the tensor-core path; older architectures run the same
// per-lane element mapping on CUDA cores (same result, compiles everywhere).
__device__ __forceinline__ float gpucast_f16_to_f32(unsigned short h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}

extern "C" __global__ void tensor_gemm_f16(const unsigned short* A, const unsigned short* B, float* C, int n) {
    int lane = threadIdx.x & 31;
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int tiles_n = n / 8;
    int m0 = (warp / tiles_n) * 16;
    int n0 = (warp % tiles_n) * 8;
    if (m0 >= n) return;
    int g = lane >> 2, t = lane & 3;
    float c0 = 0.0f, c1 = 0.0f, c2 = 0.0f, c3 = 0.0f;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    for (int k0 = 0; k0 < n; k0 += 16) {
        const unsigned int* ar0 = (const unsigned int*)(A + (m0 + g) * n + k0 + t * 2);
        const unsigned int* ar1 = (const unsigned int*)(A + (m0 + g + 8) * n + k0 + t * 2);
        unsigned int a0 = ar0[0], a1 = ar1[0], a2 = ar0[4], a3 = ar1[4];
        unsigned int b0 = (unsigned int)B[(k0 + t * 2) * n + n0 + g] | ((unsigned int)B[(k0 + t * 2 + 1) * n + n0 + g] << 16);
        unsigned int b1 = (unsigned int)B[(k0 + t * 2 + 8) * n + n0 + g] | ((unsigned int)B[(k0 + t * 2 + 9) * n + n0 + g] << 16);
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
            : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
#else
    for (int k = 0; k < n; ++k) {
        float a_lo = gpucast_f16_to_f32(A[(m0 + g) * n + k]);
        float a_hi = gpucast_f16_to_f32(A[(m0 + g + 8) * n + k]);
        float b_0 = gpucast_f16_to_f32(B[k * n + n0 + t * 2]);
        float b_1 = gpucast_f16_to_f32(B[k * n + n0 + t * 2 + 1]);
        c0 = fmaf(a_lo, b_0, c0); c1 = fmaf(a_lo, b_1, c1);
        c2 = fmaf(a_hi, b_0, c2); c3 = fmaf(a_hi, b_1, c3);
    }
#endif
    C[(m0 + g) * n + n0 + t * 2] = c0;
    C[(m0 + g) * n + n0 + t * 2 + 1] = c1;
    C[(m0 + g + 8) * n + n0 + t * 2] = c2;
    C[(m0 + g + 8) * n + n0 + t * 2 + 1] = c3;
}
