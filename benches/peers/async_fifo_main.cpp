// async_fifo_main.cpp: Verilator harness for async_fifo.v. Usage:
// Vasync_fifo CYCLES. Runs CYCLES edges of the writer clock (period 1094 ps)
// and every reader edge (754 ps, phase 137 ps) up to the last of them, in
// exact integer picoseconds, and prints the counters in the format run.sh
// parses.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "Vasync_fifo.h"
#include "verilated.h"

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s CYCLES\n", argv[0]);
        return 2;
    }
    const uint64_t cycles = std::strtoull(argv[1], nullptr, 10);
    if (cycles == 0) {
        std::printf("checksum=0 received=0\n");
        return 0;
    }
    const uint64_t w_period = 1094, r_period = 754, r_phase = 137;
    const uint64_t stop = (cycles - 1) * w_period;
    auto context = std::make_unique<VerilatedContext>();
    auto top = std::make_unique<Vasync_fifo>(context.get());
    top->wclk = 0;
    top->rclk = 0;
    top->eval();
    uint64_t next_w = 0, next_r = r_phase;
    for (;;) {
        const uint64_t t = next_w < next_r ? next_w : next_r;
        if (t > stop) break;
        // Raise every clock with an edge now, evaluate once (coincident edges
        // see each other's state from before the instant), then lower them.
        if (next_w == t) {
            top->wclk = 1;
            next_w += w_period;
        }
        if (next_r == t) {
            top->rclk = 1;
            next_r += r_period;
        }
        top->eval();
        top->wclk = 0;
        top->rclk = 0;
        top->eval();
    }
    top->final();
    std::printf("checksum=%llu received=%llu\n",
                static_cast<unsigned long long>(top->checksum),
                static_cast<unsigned long long>(top->received));
    return 0;
}
