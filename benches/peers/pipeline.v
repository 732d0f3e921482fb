// pipeline.v: the Verilog twin of pipeline.chr (see that file). Non-blocking
// assignments in always @(posedge clk), one block per stage from a generate
// loop (Verilator does not unroll a for loop of delayed array assignments
// past its unroll limit); everything starts at zero.
module pipeline #(parameter N = 16) (
    input  wire        clk,
    output reg  [63:0] checksum
);
    reg [31:0] source;
    reg [31:0] r [0:N-1];
    integer i;

    function automatic [31:0] mix(input [31:0] x);
        reg [31:0] y;
        begin
            y = x ^ (x >> 15);
            mix = (y * 32'h2c1b3c6d) ^ (y >> 13);
        end
    endfunction

    initial begin
        source = 0;
        checksum = 0;
        for (i = 0; i < N; i = i + 1) r[i] = 0;
    end

    always @(posedge clk) begin
        source <= source + 1;
        r[0] <= mix(source);
        checksum <= checksum + {32'd0, r[N - 1]};
    end

    genvar g;
    generate
        for (g = 1; g < N; g = g + 1) begin : stage
            always @(posedge clk) r[g] <= mix(r[g - 1]);
        end
    endgenerate
endmodule
