// crc32.v: the Verilog twin of crc32.chr (see that file): blocking
// temporaries for the xorshift step and the 32 CRC steps, non-blocking
// register updates; everything starts as crc32.chr declares.
module crc32 (
    input  wire        clk,
    output reg  [63:0] checksum
);
    reg [31:0] data;
    reg [31:0] crc;
    reg [31:0] d;
    reg [31:0] c;
    integer i;

    initial begin
        data = 32'd1;
        crc = 32'hFFFFFFFF;
        checksum = 0;
    end

    always @(posedge clk) begin
        d = data ^ {data[18:0], 13'd0};
        d = d ^ {17'd0, d[31:17]};
        d = d ^ {d[26:0], 5'd0};
        data <= d;
        c = crc ^ data;
        for (i = 0; i < 32; i = i + 1)
            c = {1'b0, c[31:1]} ^ (32'hEDB88320 & {32{c[0]}});
        crc <= c;
        checksum <= checksum + {32'd0, c};
    end
endmodule
