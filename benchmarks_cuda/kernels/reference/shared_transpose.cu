// reference-16: 32x32 tile through shared memory padded to 33 columns; block 32x32.
extern "C" __global__ void shared_transpose(const float* in, float* out, int rows, int cols) {
    __shared__ float tile[32][33];
    int c = blockIdx.x * 32 + threadIdx.x;
    int r = blockIdx.y * 32 + threadIdx.y;
    if (r < rows && c < cols) tile[threadIdx.y][threadIdx.x] = in[r * cols + c];
    __syncthreads();
    int oc = blockIdx.y * 32 + threadIdx.x;  // column in out (= row in in)
    int orow = blockIdx.x * 32 + threadIdx.y; // row in out (= column in in)
    if (orow < cols && oc < rows) out[orow * rows + oc] = tile[threadIdx.x][threadIdx.y];
}
