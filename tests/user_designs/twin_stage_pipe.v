// Verilog twin of twin_stage_pipe.chr: each pipe is a valid flop beside a
// data flop; a pipe neither written nor retained clears its valid flop and
// keeps its data (docs/language.md, stage registers; contract §3).
`timescale 1ps/1ps
module tb;
  reg clk = 0;
  reg [31:0] x = 32'hDEADBEEF;
  reg [15:0] n = 0;
  reg signed [15:0] sum = 0;
  reg [63:0] cyc = 0;
  reg v [0:2];
  reg [1:0] kind [0:2];
  reg signed [7:0] imm [0:2];
  integer i;
  initial for (i = 0; i < 3; i = i + 1) begin v[i] = 0; kind[i] = 0; imm[i] = 0; end

  `include "xorshift32.vh"

  reg stall, flush, fresh;
  reg [1:0] dk;
  always @(posedge clk) begin
    stall = (x & 7) == 0;
    flush = (x & 31) == 9;
    fresh = (x & 3) != 3;
    dk = ((x >> 4) % 3 == 1) ? 1 : (((x >> 4) % 3 == 2) ? 2 : 0);
    $display("%0dps clk %0d T top.p p v0=%0d v1=%0d ov=%0d k=%0d imm=%0d sum=%0d st=%0d fl=%0d",
      $time - 500, cyc, v[0], v[1], v[2], kind[2], imm[2], sum, stall, flush);
    if (stall) begin
      // every pipe retained: valid and data hold
    end else begin
      if (v[2]) sum <= sum + imm[2];
      v[2] <= v[1];
      if (v[1]) begin kind[2] <= kind[1]; imm[2] <= imm[1]; end
      v[1] <= v[0] && !flush;
      if (v[0] && !flush) begin kind[1] <= kind[0]; imm[1] <= imm[0]; end
      v[0] <= fresh;
      if (fresh) begin kind[0] <= dk; imm[0] <= x[15:8]; end
    end
    x <= xorshift32(x);
    n <= n + 1;
    cyc <= cyc + 1;
    if (n == 399) begin #1 $finish; end
  end
  always #500 clk = ~clk;
endmodule
