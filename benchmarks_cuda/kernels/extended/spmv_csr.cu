// extended: CSR sparse matrix-vector product y = A x, one thread per row.
extern "C" __global__ void spmv_csr(const int* row_ptr, const int* cols, const float* vals, const float* x, float* y, int rows) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float s = 0.0f;
    for (int j = row_ptr[r]; j < row_ptr[r + 1]; ++j) s += vals[j] * x[cols[j]];
    y[r] = s;
}
