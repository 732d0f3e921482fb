// wide512.v: the Verilog twin of wide512.chr (see that file): blocking
// temporaries for the xorshift step, non-blocking register updates;
// everything starts as wide512.chr declares.
module wide512 (
    input  wire        clk,
    output reg  [63:0] checksum
);
    reg [511:0] x;
    reg [511:0] acc;
    reg [511:0] t;

    initial begin
        x = 512'd1;
        acc = 512'd0;
        checksum = 0;
    end

    always @(posedge clk) begin
        t = x ^ (x << 13);
        t = t ^ (t >> 7);
        t = t ^ (t << 17);
        x <= t;
        acc <= acc * 512'h9E3779B97F4A7C15 + (t ^ {t[255:0], t[511:256]});
        checksum <= checksum + (acc[63:0] ^ acc[511:448] ^ acc[300:237]);
    end
endmodule
