// pipeline.v: the Verilog twin of pipeline.chr (see that file). Non-blocking
// assignments in one always @(posedge clk); everything starts at zero.
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
        for (i = 1; i < N; i = i + 1) r[i] <= mix(r[i - 1]);
        checksum <= checksum + {32'd0, r[N - 1]};
    end
endmodule
