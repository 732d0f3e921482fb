// Verilog twin of twin_datapath.chr, written from docs/language.md:
// wrapping arithmetic at the operand width, RISC-V division, shifts by the
// width or more give 0 (sign fill for >> of a negative signed value).
`timescale 1ps/1ps
module tb;
  reg clk = 0;
  reg [31:0] x = 32'h2545F491;
  reg signed [15:0] acc = 0;
  reg [2:0] hist_op [0:1];
  reg signed [15:0] hist_a [0:1];
  reg [7:0] hist_b [0:1];
  reg [15:0] n = 0;
  reg [63:0] cyc = 0;
  integer i;
  initial begin
    for (i = 0; i < 2; i = i + 1) begin hist_op[i] = 0; hist_a[i] = 0; hist_b[i] = 0; end
  end

  `include "xorshift32.vh"

  function signed [15:0] sdiv(input signed [15:0] a, input signed [15:0] d);
    begin
      if (d == 0) sdiv = -16'sd1;
      else if (a == -16'sd32768 && d == -16'sd1) sdiv = a;
      else sdiv = a / d;
    end
  endfunction

  function signed [15:0] srem(input signed [15:0] a, input signed [15:0] d);
    begin
      if (d == 0) srem = a;
      else if (a == -16'sd32768 && d == -16'sd1) srem = 0;
      else srem = a % d;
    end
  endfunction

  reg [2:0] op;
  reg signed [15:0] a, d, y;
  reg [7:0] b;
  reg [4:0] sh;
  always @(posedge clk) begin
    op = x[2:0];
    a = x[23:8];
    if (((x >> 3) % 5) == 0) a = -16'sd32768;
    b = x[31:24];
    if (((x >> 3) % 7) == 0) b = 0; else if (((x >> 3) % 7) == 1) b = 255;
    d = {{8{b[7]}}, b};
    sh = b[4:0];
    case (op)
      0: y = a + {8'd0, b};
      1: y = a - d;
      2: y = a * d;
      3: y = sdiv(a, d);
      4: y = srem(a, d);
      5: y = (sh >= 16) ? 16'sd0 : (a << sh);
      6: y = (sh >= 16) ? 16'sd0 : ($unsigned(a) >> sh);
      default: y = (sh >= 16) ? (a[15] ? -16'sd1 : 16'sd0) : (a >>> sh);
    endcase
    $display("%0dps clk %0d T top.u s op=%0d a=%0d b=%0d y=%0d acc=%0d h0=%0d h1=%0d hop=%0d",
      $time - 500, cyc, op, a, b, y, acc, hist_a[0], hist_b[1], hist_op[1]);
    acc <= acc ^ y;
    hist_op[x % 2] <= op; hist_a[x % 2] <= a; hist_b[x % 2] <= b;
    if ($unsigned(y) > 40000) hist_b[(x >> 1) % 2] <= 7;
    x <= xorshift32(x);
    n <= n + 1;
    cyc <= cyc + 1;
    if (n == 299) begin #1 $finish; end
  end
  always #500 clk = ~clk;
endmodule
