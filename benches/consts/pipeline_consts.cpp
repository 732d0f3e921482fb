// pipeline_consts.cpp: benches/consts/pipeline_consts.chr written by hand,
// the loop a C++ programmer would write: every edge, each stage takes the
// mix of the stage before it (as it was before the edge) and its own
// constant, from a double buffer. Build with -DN=<stages>; usage:
// pipeline_consts CYCLES. Prints the checksum in chronc's terms.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <utility>

#ifndef N
#define N 256
#endif

static inline uint32_t mix(uint32_t x) {
    uint32_t y = x ^ (x >> 15);
    return (y * 0x2c1b3c6du) ^ (y >> 13);
}

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s CYCLES\n", argv[0]);
        return 2;
    }
    const uint64_t cycles = std::strtoull(argv[1], nullptr, 10);
    static uint32_t a[N], b[N];
    uint32_t* r = a;
    uint32_t* next = b;
    uint32_t source = 0;
    uint64_t checksum = 0;
    for (uint64_t c = 0; c < cycles; ++c) {
        checksum += r[N - 1];
        next[0] = mix(source);
        for (uint32_t i = 1; i < N; ++i) {
            next[i] = mix(r[i - 1] ^ (i * 0x9e3779b9u));
        }
        std::swap(r, next);
        source += 1;
    }
    std::printf("checksum=%llu\n", static_cast<unsigned long long>(checksum));
    return 0;
}
