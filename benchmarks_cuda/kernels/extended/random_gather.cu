// extended: b[i] = a[perm[i]] with a true random permutation (the honest variant of
// the reference random_access, whose index is all zero).
extern "C" __global__ void random_gather(const float* a, const int* perm, float* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = a[perm[i]];
}
