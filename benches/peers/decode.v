// decode.v: the Verilog twin of decode.chr (see that file): a function per
// immediate format, a case on the opcode, non-blocking register updates.
module decode (
    input  wire        clk,
    output reg  [63:0] checksum
);
    reg [63:0] word;
    reg [63:0] w;

    function automatic [31:0] imm(input [31:0] x);
        reg s;
        begin
            s = x[31];
            case (x[6:0])
                7'h13, 7'h03, 7'h67: imm = {{20{s}}, x[31:20]};
                7'h23: imm = {{20{s}}, x[31:25], x[11:7]};
                7'h63: imm = {{19{s}}, s, x[7], x[30:25], x[11:8], 1'b0};
                7'h37, 7'h17: imm = {x[31:12], 12'd0};
                7'h6F: imm = {{11{s}}, s, x[19:12], x[20], x[30:21], 1'b0};
                default: imm = 32'd0;
            endcase
        end
    endfunction

    function automatic [14:0] regs(input [31:0] x);
        regs = {x[11:7], x[19:15], x[24:20]};
    endfunction

    initial begin
        word = 64'h9E3779B97F4A7C15;
        checksum = 0;
    end

    always @(posedge clk) begin
        w = word ^ (word << 13);
        w = w ^ (w >> 7);
        w = w ^ (w << 17);
        word <= w;
        checksum <= checksum + {32'd0, imm(word[31:0])} + {32'd0, imm(word[63:32])}
            + {34'd0, regs(word[31:0]), regs(word[63:32])};
    end
endmodule
