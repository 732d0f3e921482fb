// structs.v: the Verilog twin of structs.chr (tests/conformance.rs), written
// from the layout docs/language.md states for struct casts: fields side by
// side, the first the most significant, array element 0 the most
// significant, a bool one bit, signed fields sign-extended when taken
// apart. Each packet is a plain vector sliced by hand; lines follow the
// text log's format.
`timescale 1ps / 1ps
module structs_tb;
    localparam [63:0] OFF = 64'd100000;
    localparam [63:0] PERIOD = 64'd1000;

    reg [63:0] limit;
    reg clk = 0;
    reg [63:0] cyc;
    reg [63:0] now;

`include "xorshift.vh"

    reg [63:0] x;
    reg [15:0] w, q;
    reg [2:0] kind;
    reg urgent;
    reg signed [3:0] len;
    reg [3:0] d0, d1;
    reg [79:0] wide;
    reg signed [6:0] tag;
    reg [2:0] t0, t2;

    always @(posedge clk) begin
        now = $time - OFF;
        // Pkt: h (8 bits: kind 3, urgent 1, len 4), then data[0], data[1].
        w = x[15:0];
        kind = w[15:13];
        urgent = w[12];
        len = w[11:8];
        d0 = w[7:4];
        d1 = w[3:0];
        q = {kind + 3'd1, ~urgent, len - 4'sd3, d1, d0};
        // Wide: tag 7, body 64, tail[0..2] 3 each = 80 bits.
        wide = {x[15:0], x};
        tag = wide[79:73];
        t0 = wide[8:6];
        t2 = wide[2:0];
        if (now <= limit) begin
            $display("clk %0d %0dps T top.pk pkt kind=%0d urgent=%0d len=%0d d0=%0d d1=%0d back=%0d swapped=%0d hdr=%0d",
                     cyc, now, kind, urgent, len, d0, d1, w, q, w[15:8]);
            $display("clk %0d %0dps T top.pk wide tag=%0d t0=%0d t2=%0d low=%0d high=%0d",
                     cyc, now, tag, t0, t2, wide[63:0], wide[79:64]);
        end
        x <= xorshift(x);
        cyc <= cyc + 1;
    end

    initial begin
        if (!$value$plusargs("limit=%d", limit)) limit = 100000;
        cyc = 0;
        x = 64'h9E3779B97F4A7C15;
        fork
            begin
                #(OFF);
                forever begin
                    clk = 1;
                    #(PERIOD / 2) clk = 0;
                    #(PERIOD - PERIOD / 2);
                end
            end
            begin
                #(OFF + limit + 1);
                $finish;
            end
        join
    end
endmodule
