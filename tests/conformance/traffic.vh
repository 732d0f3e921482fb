// traffic.vh: the stimulus every Verilog twin shares with its Chronon design,
// included inside each testbench module: a 16-bit Galois LFSR step and the
// traffic modes (0 continuous, 1 bursty: 5 of every 16 cycles, 2 and 3
// pseudo-random from the LFSR).

    function [15:0] lfsr_next(input [15:0] x);
        lfsr_next = (x >> 1) ^ ({16{x[0]}} & 16'hB400);
    endfunction

    function active(input [31:0] mode, input [31:0] c, input [15:0] lfsr);
        case (mode)
            1: active = (c % 16) < 5;
            2: active = lfsr[0];
            3: active = lfsr[1] & lfsr[0];
            default: active = 1'b1;
        endcase
    endfunction
