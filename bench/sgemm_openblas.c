/* OpenBLAS sgemm on the shapes of bench/matmul.sh, for comparison with Fusebox's own matmul.
   Usage: sgemm_openblas N K M ITERS  -> prints ms per call */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char** argv) {
  if (argc != 5) return 2;
  int n = atoi(argv[1]), k = atoi(argv[2]), m = atoi(argv[3]), iters = atoi(argv[4]);
  float* a = malloc(sizeof(float) * n * k);
  float* b = malloc(sizeof(float) * k * m);
  float* c = malloc(sizeof(float) * n * m);
  for (long i = 0; i < (long)n * k; ++i) a[i] = (float)((i * 7919) % 1000) / 1000.0f - 0.5f;
  for (long i = 0; i < (long)k * m; ++i) b[i] = (float)((i * 104729) % 1000) / 1000.0f - 0.5f;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, m, k, 1.0f, a, k, b, m, 0.0f, c, m);
  double t0 = now_ms();
  for (int i = 0; i < iters; ++i) cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, m, k, 1.0f, a, k, b, m, 0.0f, c, m);
  printf("%.4f\n", (now_ms() - t0) / iters);
  return 0;
}
