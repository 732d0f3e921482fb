// checksum_main.cpp: Verilator harness for the one-clock peer designs
// (crc32.v, decode.v, pipeline.v, router_ring.v, cpu4.v: a `clk` input and a 64-bit `checksum`
// output). Build with -CFLAGS -DVTOP=Vname (Verilator's class for module
// `name`; run.sh passes it). Usage: Vname CYCLES. Runs CYCLES rising edges
// and prints the checksum in the format run.sh parses.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>

#define CHECKSUM_STR2(x) #x
#define CHECKSUM_STR(x) CHECKSUM_STR2(x)
#include CHECKSUM_STR(VTOP.h)
#include "verilated.h"

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s CYCLES\n", argv[0]);
        return 2;
    }
    const uint64_t cycles = std::strtoull(argv[1], nullptr, 10);
    auto context = std::make_unique<VerilatedContext>();
    auto top = std::make_unique<VTOP>(context.get());
    top->clk = 0;
    top->eval();
    for (uint64_t c = 0; c < cycles; ++c) {
        top->clk = 1;
        top->eval();
        top->clk = 0;
        top->eval();
    }
    top->final();
    std::printf("checksum=%llu\n", static_cast<unsigned long long>(top->checksum));
    return 0;
}
