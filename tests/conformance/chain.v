// chain.v: the Verilog twin of chain.chr (tests/conformance.rs), written
// from the timing contract, sections 2 and 4: links as queues of (item,
// arrival edge); can_send() while the items in flight before the edge stay
// below the capacity; recv() and peek() see the oldest item whose arrival
// edge has come; latency 0 is combinational, so within the edge the head
// runs before the middle unit and the middle unit before the tail (the
// order the contract requires, whatever the declaration order).
`timescale 1ps / 1ps
module chain_tb;
    localparam [63:0] OFF = 64'd100000;
    localparam [63:0] PERIOD = 64'd1000;
    localparam [63:0] PHASE = 64'd10;
    localparam QN = 64;

    reg [63:0] limit, c1, c2, l2;
    reg [31:0] amode, bmode, cmode;
    reg clk = 0;
    reg [63:0] now, cyc;

    `include "traffic.vh"

    // Link ab (latency 0) and link bc (latency l2).
    reg [31:0] ab_item [0:QN-1];
    reg [63:0] ab_arr [0:QN-1];
    reg [31:0] bc_item [0:QN-1];
    reg [63:0] bc_arr [0:QN-1];
    reg [63:0] ab_head, ab_tail, bc_head, bc_tail, ab_before, bc_before;

    reg [31:0] n, count, sum, b_v, c_v;
    reg [15:0] alfsr, blfsr, clfsr;
    reg a_ok, b_pk, b_fwd, c_got;

    always @(posedge clk) begin
        now = $time - OFF;
        ab_before = ab_tail - ab_head;
        bc_before = bc_tail - bc_head;
        // a
        a_ok = active(amode, cyc, alfsr) && ab_before < c1;
        if (a_ok) begin
            ab_item[ab_tail % QN] = n * 3 + 1;
            ab_arr[ab_tail % QN] = cyc;
            ab_tail = ab_tail + 1;
            n <= n + 1;
        end
        // b
        b_pk = ab_head != ab_tail && ab_arr[ab_head % QN] <= cyc;
        b_fwd = b_pk && active(bmode, cyc, blfsr) && bc_before < c2;
        b_v = 0;
        if (b_fwd) begin
            b_v = ab_item[ab_head % QN] + count;
            ab_head = ab_head + 1;
            bc_item[bc_tail % QN] = b_v;
            bc_arr[bc_tail % QN] = cyc + l2;
            bc_tail = bc_tail + 1;
            count <= count + 1;
        end
        // c
        c_got = active(cmode, cyc, clfsr) && bc_head != bc_tail
                && bc_arr[bc_head % QN] <= cyc;
        c_v = 0;
        if (c_got) begin
            c_v = bc_item[bc_head % QN];
            bc_head = bc_head + 1;
            sum <= sum + c_v;
        end
        if (now <= limit) begin
            $display("clk %0d %0dps T top.a a ok=%0d n=%0d", cyc, now, a_ok, n);
            $display("clk %0d %0dps T top.b b pk=%0d fwd=%0d v=%0d count=%0d",
                     cyc, now, b_pk, b_fwd, b_v, count);
            $display("clk %0d %0dps T top.c c got=%0d v=%0d sum=%0d", cyc, now, c_got, c_v, sum);
        end
        alfsr <= lfsr_next(alfsr);
        blfsr <= lfsr_next(blfsr);
        clfsr <= lfsr_next(clfsr);
        cyc <= cyc + 1;
    end

    initial begin
        if (!$value$plusargs("limit=%d", limit)) limit = 100000;
        if (!$value$plusargs("c1=%d", c1)) c1 = 1;
        if (!$value$plusargs("c2=%d", c2)) c2 = 1;
        if (!$value$plusargs("l2=%d", l2)) l2 = 0;
        if (!$value$plusargs("amode=%d", amode)) amode = 0;
        if (!$value$plusargs("bmode=%d", bmode)) bmode = 0;
        if (!$value$plusargs("cmode=%d", cmode)) cmode = 0;
        ab_head = 0; ab_tail = 0; bc_head = 0; bc_tail = 0;
        n = 0; count = 0; sum = 0; cyc = 0;
        alfsr = 16'hACE1; blfsr = 16'h1D0F; clfsr = 16'h7A5B;
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
