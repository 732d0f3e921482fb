// single_clock.v: the Verilog twin of single_clock.chr (tests/conformance.rs),
// written from the language reference (wrapping arithmetic at the operand
// width, sign or zero extension by the source type, shifts by the width or
// more give 0 or the sign, RISC-V division by zero and overflow) and the
// timing contract (sections 2 and 3: old-value reads, last write wins, stage
// registers whose pipes are invalid unless written or retained).
//
// Each unit's tick is a part of one always @(posedge clk): blocking
// assignments for its locals, non-blocking ones for its registers. Results
// are stored in unsigned regs of the Chronon type's width; values of a signed
// Chronon type are displayed through `$signed`, so `%0d` prints them as
// Chronon's text log does (sign-extended, '-3'). Lines follow the text log's
// record order within an edge: by unit instance path, then program order.
`timescale 1ps / 1ps
module single_clock_tb;
    localparam [63:0] OFF = 64'd100000;
    localparam [63:0] PERIOD = 64'd1000;
    localparam [63:0] PHASE = 64'd250;

    reg [63:0] limit;
    reg clk = 0;
    reg [63:0] cyc;
    reg [63:0] now;

`include "xorshift.vh"

    // ---- unit Alu ----
    reg [63:0] ax;
    reg [7:0] a8, b8, sh8, sh;
    reg signed [7:0] s8, t8, e8, m8;
    reg [15:0] a16;
    reg signed [15:0] s16, s8w;
    reg [31:0] a32;
    reg signed [31:0] s32, e32;
    reg signed [63:0] s64, s32w;
    reg [7:0] d8;
    reg [7:0] add8, sub8, mul8, sadd8, ssub8, smul8, tr8, trs8, bits;
    reg [15:0] mix16, smix16, sext, zext, neg, tr16, inv, shl16, div16;
    reg [31:0] mul32, shl32, sar32;
    reg [63:0] smul64, shr64, sar64;
    reg [7:0] shl8, shr8, sar8, div8, rem8;
    reg signed [7:0] sdiv8, srem8;
    reg signed [31:0] sdiv32, srem32;
    reg lt, slt, ge, eq, ne, le64, gt;

    // ---- unit Regs ----
    reg [63:0] rx;
    reg [31:0] r, before, seen;
    reg [15:0] p, q;
    reg [7:0] a [0:3];
    reg [7:0] c;
    reg [1:0] ri, rj;

    // ---- unit Stages ----
    reg [63:0] sx;
    reg [31:0] n;
    reg [2:0] sv;
    reg [31:0] sd [0:2];
    reg [31:0] v0, v1, v2;

    // ---- unit Agg ----
    reg [63:0] gx;
    reg [7:0] sa;        // s.a
    reg [15:0] sb;       // s.b
    reg sc;              // s.c
    reg [15:0] arr [0:3];
    reg [1:0] op;        // Add 0, Sub 1, Xor 2, Nop 3
    reg [15:0] acc, gr, sum;
    reg [1:0] k, sel;
    integer i;

    always @(posedge clk) begin
        now = $time - OFF;
        // Agg: whole-then-part and part-then-whole writes of a struct and an
        // array; per element, the last non-blocking assignment wins.
        k = gx[6:5];
        sel = gx[10:9];
        if (gx[0]) begin
            sa <= gx[7:0];
            sb <= gx[23:8];
            sc <= gx[1];
            sb <= sb + 16'd1;
        end else begin
            sa <= sa ^ 8'h11;
            sa <= sa;
            sb <= gx[39:24];
            sc <= !sc;
        end
        if (gx[2]) begin
            arr[0] <= 1;
            arr[1] <= 2;
            arr[2] <= 3;
            arr[3] <= gx[47:32];
            arr[k] <= arr[sel] + 16'd7;
        end else begin
            arr[k] <= gx[55:40];
        end
        gr = acc;
        case (op)
            0: gr = acc + arr[0];
            1: gr = acc - arr[1];
            2: gr = acc ^ arr[2];
            default: ;
        endcase
        acc <= gr;
        op <= gx[13:12];
        sum = 0;
        for (i = 0; i < 4; i = i + 1) sum = sum + arr[i] * (i + 1);
        if (now <= limit) begin
            $display("clk %0d %0dps T top.agg agg sa=%0d sb=%0d sc=%0d op=%0d acc=%0d sum=%0d",
                     cyc, now, sa, sb, sc, op, acc, sum);
            $display("clk %0d %0dps T top.agg arr a0=%0d a1=%0d a2=%0d a3=%0d",
                     cyc, now, arr[0], arr[1], arr[2], arr[3]);
        end
        gx <= xorshift(gx);

        // Alu
        a8 = ax[7:0];
        b8 = ax[15:8];
        s8 = ax[23:16];
        t8 = ax[31:24];
        a16 = ax[47:32];
        s16 = ax[55:40];
        a32 = ax[34:3];
        s32 = ax[60:29];
        s64 = ax;
        sh8 = ax[57:50] & 8'd15;
        sh = ax[63:58];
        s8w = {{8{s8[7]}}, s8};
        s32w = {{32{s32[31]}}, s32};
        add8 = a8 + b8;
        sub8 = a8 - b8;
        mul8 = a8 * b8;
        sadd8 = s8 + t8;
        ssub8 = s8 - t8;
        smul8 = s8 * t8;
        mix16 = {8'd0, a8} + a16;
        smix16 = s8w * s16;
        sext = s8w;
        zext = {8'd0, a8};
        neg = 16'd0 - s16;
        tr8 = a32[7:0];
        trs8 = s32[7:0];
        tr16 = s64[15:0];
        mul32 = a32 * s32;
        smul64 = s64 * s32w;
        inv = ~a16;
        bits = (a8 & b8) | (a8 ^ 8'h5A);
        shl8 = a8 << sh8;
        shr8 = a8 >> sh8;
        sar8 = s8 >>> sh8;
        shl32 = a32 << sh;
        sar32 = s32 >>> sh;
        shr64 = ax >> sh;
        sar64 = s64 >>> sh;
        shl16 = s16 << sh8;
        d8 = b8 & 8'd3;
        e8 = t8 >>> 6;
        m8 = (a8 & 8'd3) == 0 ? -8'sd128 : s8;
        e32 = s32 >>> 30;
        div8 = d8 == 0 ? 8'hFF : a8 / d8;
        rem8 = d8 == 0 ? a8 : a8 % d8;
        if (e8 == 0) begin
            sdiv8 = -1;
            srem8 = m8;
        end else if (m8 == -8'sd128 && e8 == -1) begin
            sdiv8 = m8;
            srem8 = 0;
        end else begin
            sdiv8 = m8 / e8;
            srem8 = m8 % e8;
        end
        if (e32 == 0) begin
            sdiv32 = -1;
            srem32 = s32;
        end else if (s32 == 32'sh80000000 && e32 == -1) begin
            sdiv32 = s32;
            srem32 = 0;
        end else begin
            sdiv32 = s32 / e32;
            srem32 = s32 % e32;
        end
        div16 = b8 == 0 ? 16'hFFFF : a16 / {8'd0, b8};
        lt = a8 < b8;
        slt = s8 < t8;
        ge = s16 >= s8w;
        eq = a32 == s32;
        ne = a16 != {8'd0, b8};
        le64 = s64 <= s32w;
        gt = $signed(a8) > t8;
        if (now <= limit) begin
            $display("clk %0d %0dps T top.alu add add8=%0d sub8=%0d mul8=%0d sadd8=%0d ssub8=%0d smul8=%0d mix16=%0d smix16=%0d",
                     cyc, now, add8, sub8, mul8, $signed(sadd8), $signed(ssub8), $signed(smul8), mix16,
                     $signed(smix16));
            $display("clk %0d %0dps T top.alu cast sext=%0d zext=%0d neg=%0d tr8=%0d trs8=%0d tr16=%0d",
                     cyc, now, sext, $signed(zext), $signed(neg), tr8, $signed(trs8), $signed(tr16));
            $display("clk %0d %0dps T top.alu wide mul32=%0d smul64=%0d inv=%0d bits=%0d",
                     cyc, now, mul32, $signed(smul64), inv, bits);
            $display("clk %0d %0dps T top.alu shift shl8=%0d shr8=%0d sar8=%0d shl32=%0d sar32=%0d shr64=%0d sar64=%0d shl16=%0d",
                     cyc, now, shl8, shr8, $signed(sar8), shl32, $signed(sar32), shr64, $signed(sar64),
                     $signed(shl16));
            $display("clk %0d %0dps T top.alu div div8=%0d rem8=%0d sdiv8=%0d srem8=%0d sdiv32=%0d srem32=%0d div16=%0d",
                     cyc, now, div8, rem8, $signed(sdiv8), $signed(srem8),
                     $signed(sdiv32), $signed(srem32), div16);
            $display("clk %0d %0dps T top.alu cmp lt=%0d slt=%0d ge=%0d eq=%0d ne=%0d le64=%0d gt=%0d",
                     cyc, now, lt, slt, ge, eq, ne, le64, gt);
        end
        ax <= xorshift(ax);

        // Regs
        before = r;
        r <= r + 1;
        seen = r;
        if (rx[0]) r <= r * 3;
        p <= q;
        q <= p + rx[15:0];
        ri = rx[9:8];
        rj = rx[11:10];
        a[ri] <= a[rj] + 8'd1;
        a[rj] <= rx[23:16];
        c <= c - 8'd1;
        if (now <= limit) begin
            $display("clk %0d %0dps T top.regs regs before=%0d seen=%0d p=%0d q=%0d c=%0d",
                     cyc, now, before, seen, p, q, $signed(c));
            $display("clk %0d %0dps T top.regs arr a0=%0d a1=%0d a2=%0d a3=%0d",
                     cyc, now, a[0], a[1], a[2], a[3]);
        end
        rx <= xorshift(rx);

        // Stages: a pipe is invalid at the next edge unless written or
        // retained in this tick.
        v0 = sv[0] ? sd[0] : 0;
        v1 = sv[1] ? sd[1] : 0;
        v2 = sv[2] ? sd[2] : 0;
        if (now <= limit)
            $display("clk %0d %0dps T top.st stage q0=%0d v0=%0d q1=%0d v1=%0d q2=%0d v2=%0d",
                     cyc, now, sv[0], v0, sv[1], v1, sv[2], v2);
        sv <= 3'b000;
        if (sv[1] && sx[0]) begin
            sv[2] <= 1;
            sd[2] <= v1 + 100;
        end else if (sx[1]) sv[2] <= sv[2];
        if (sv[0] && sx[2]) begin
            sv[1] <= 1;
            sd[1] <= v0 * 2;
        end else if (sx[3]) sv[1] <= sv[1];
        if (sx[4]) begin
            sv[0] <= 1;
            sd[0] <= n;
            n <= n + 1;
        end else if (sx[5]) sv[0] <= sv[0];
        sx <= xorshift(sx);

        cyc <= cyc + 1;
    end

    initial begin
        if (!$value$plusargs("limit=%d", limit)) limit = 100000;
        cyc = 0;
        gx = 64'h853C49E6748FEA9B;
        sa = 0; sb = 0; sc = 0; op = 0; acc = 3;
        for (i = 0; i < 4; i = i + 1) arr[i] = 0;
        ax = 64'h9E3779B97F4A7C15;
        rx = 64'h2545F4914F6CDD1D;
        r = 5; p = 1; q = 2; c = 8'hFD;
        a[0] = 0; a[1] = 0; a[2] = 0; a[3] = 0;
        sx = 64'hD1B54A32D192ED03;
        n = 0; sv = 0;
        sd[0] = 0; sd[1] = 0; sd[2] = 0;
        fork
            begin
                #(OFF + PHASE);
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
