// fan.v: the Verilog twin of fan.chr (tests/conformance.rs), written from
// the timing contract, section 4. Three links, each a queue of (item,
// arrival edge): a (p -> q), b (p -> r), c (s -> q).
//
// - can_send(): fewer than R items sent on the port in this tick, and on
//   every link of the port the items in flight (sent, not yet received),
//   counted before the edge, plus those sent in this tick stay below the
//   link's capacity. (The contract says "counted before the edge"; with
//   R > 1 we read the items sent earlier in the same tick as in flight too,
//   as credit semantics and a capacity in items imply.)
// - Fan-out is all or none: p's item goes to a and b, or to neither.
// - recv() and peek() take the oldest item whose arrival edge has come;
//   fan-in (a and c into q) merges by arrival edge, then connection
//   declaration order (a before c), then send order.
// - A slot freed by recv() at edge n counts from edge n + 1: the in-flight
//   counts are taken once, at the start of the edge.
//
// Senders run before receivers in the always block, so latency 0 is
// combinational. Parameters come from plusargs.
`timescale 1ps / 1ps
module fan_tb;
    localparam [63:0] OFF = 64'd100000;
    localparam [63:0] PERIOD = 64'd1000;
    localparam QN = 64;

    reg [63:0] limit;
    reg [63:0] lq, cq, lr, cr, ls, cs_cap;
    reg [31:0] pmode, smode, qmode, rmode, rate;
    reg clk = 0;
    reg [63:0] now, cyc;

    `include "traffic.vh"

    // Links a, b, c: items, arrival edges, head and tail counters.
    reg [31:0] a_item [0:QN-1];
    reg [63:0] a_arr [0:QN-1];
    reg [31:0] b_item [0:QN-1];
    reg [63:0] b_arr [0:QN-1];
    reg [31:0] c_item [0:QN-1];
    reg [63:0] c_arr [0:QN-1];
    reg [63:0] a_head, a_tail, b_head, b_tail, c_head, c_tail;
    reg [63:0] a_before, b_before, c_before;

    reg [31:0] pseq, sseq;
    reg [15:0] plfsr, slfsr, qlfsr, rlfsr;
    reg [31:0] p_sent, p_tried, s_sent, s_tried;
    reg p_cs, s_cs;
    reg [31:0] q_got, q_v1, q_v2, q_pv, r_got, r_v1, r_v2, r_pv;
    reg q_pk, r_pk;
    reg a_ready, c_ready, take_a;
    integer k;

    always @(posedge clk) begin
        now = $time - OFF;
        a_before = a_tail - a_head;
        b_before = b_tail - b_head;
        c_before = c_tail - c_head;

        // Producer p (rate `rate`), fan-out to a and b.
        p_cs = a_before < cq && b_before < cr;
        p_sent = 0;
        p_tried = 0;
        for (k = 0; k < rate + 1; k = k + 1) begin
            if (active(pmode, cyc + 5 * k, plfsr >> k)) begin
                p_tried = p_tried + 1;
                if (p_sent < rate && a_before + p_sent < cq && b_before + p_sent < cr) begin
                    a_item[a_tail % QN] = pseq + p_sent;
                    a_arr[a_tail % QN] = cyc + lq;
                    a_tail = a_tail + 1;
                    b_item[b_tail % QN] = pseq + p_sent;
                    b_arr[b_tail % QN] = cyc + lr;
                    b_tail = b_tail + 1;
                    p_sent = p_sent + 1;
                end
            end
        end
        // Producer s (rate 1) into c.
        s_cs = c_before < cs_cap;
        s_sent = 0;
        s_tried = 0;
        for (k = 0; k < 2; k = k + 1) begin
            if (active(smode, cyc + 5 * k, slfsr >> k)) begin
                s_tried = s_tried + 1;
                if (s_sent < 1 && c_before + s_sent < cs_cap) begin
                    c_item[c_tail % QN] = 1000000 + sseq + s_sent;
                    c_arr[c_tail % QN] = cyc + ls;
                    c_tail = c_tail + 1;
                    s_sent = s_sent + 1;
                end
            end
        end

        // Consumer q: fan-in of a (declared first) and c.
        a_ready = a_head != a_tail && a_arr[a_head % QN] <= cyc;
        c_ready = c_head != c_tail && c_arr[c_head % QN] <= cyc;
        take_a = a_ready && (!c_ready || a_arr[a_head % QN] <= c_arr[c_head % QN]);
        q_pk = a_ready || c_ready;
        q_pv = !q_pk ? 0 : take_a ? a_item[a_head % QN] : c_item[c_head % QN];
        q_got = 0; q_v1 = 0; q_v2 = 0;
        if (active(qmode, cyc, qlfsr)) begin
            for (k = 0; k < 2; k = k + 1) begin
                if (k == 0 || qlfsr[3]) begin
                    a_ready = a_head != a_tail && a_arr[a_head % QN] <= cyc;
                    c_ready = c_head != c_tail && c_arr[c_head % QN] <= cyc;
                    take_a = a_ready && (!c_ready || a_arr[a_head % QN] <= c_arr[c_head % QN]);
                    if (a_ready || c_ready) begin
                        q_got = q_got + 1;
                        if (k == 0) q_v1 = take_a ? a_item[a_head % QN] : c_item[c_head % QN];
                        else q_v2 = take_a ? a_item[a_head % QN] : c_item[c_head % QN];
                        if (take_a) a_head = a_head + 1;
                        else c_head = c_head + 1;
                    end
                end
            end
        end

        // Consumer r: link b only.
        r_pk = b_head != b_tail && b_arr[b_head % QN] <= cyc;
        r_pv = r_pk ? b_item[b_head % QN] : 0;
        r_got = 0; r_v1 = 0; r_v2 = 0;
        if (active(rmode, cyc, rlfsr)) begin
            for (k = 0; k < 2; k = k + 1) begin
                if ((k == 0 || rlfsr[3]) && b_head != b_tail && b_arr[b_head % QN] <= cyc) begin
                    r_got = r_got + 1;
                    if (k == 0) r_v1 = b_item[b_head % QN];
                    else r_v2 = b_item[b_head % QN];
                    b_head = b_head + 1;
                end
            end
        end

        if (now <= limit) begin
            $display("clk %0d %0dps T top.p s cs=%0d tried=%0d sent=%0d seq=%0d",
                     cyc, now, p_cs, p_tried, p_sent, pseq);
            $display("clk %0d %0dps T top.q d pk=%0d pv=%0d got=%0d v1=%0d v2=%0d",
                     cyc, now, q_pk, q_pv, q_got, q_v1, q_v2);
            $display("clk %0d %0dps T top.r d pk=%0d pv=%0d got=%0d v1=%0d v2=%0d",
                     cyc, now, r_pk, r_pv, r_got, r_v1, r_v2);
            $display("clk %0d %0dps T top.s s cs=%0d tried=%0d sent=%0d seq=%0d",
                     cyc, now, s_cs, s_tried, s_sent, sseq);
        end
        pseq <= pseq + p_sent;
        sseq <= sseq + s_sent;
        plfsr <= lfsr_next(plfsr);
        slfsr <= lfsr_next(slfsr ^ 16'd16960);  // BASE = 1000000 as u16
        qlfsr <= lfsr_next(qlfsr);
        rlfsr <= lfsr_next(rlfsr);
        cyc <= cyc + 1;
    end

    initial begin
        if (!$value$plusargs("limit=%d", limit)) limit = 100000;
        if (!$value$plusargs("rate=%d", rate)) rate = 1;
        if (!$value$plusargs("lq=%d", lq)) lq = 1;
        if (!$value$plusargs("cq=%d", cq)) cq = 2;
        if (!$value$plusargs("lr=%d", lr)) lr = 1;
        if (!$value$plusargs("cr=%d", cr)) cr = 2;
        if (!$value$plusargs("ls=%d", ls)) ls = 1;
        if (!$value$plusargs("cs=%d", cs_cap)) cs_cap = 2;
        if (!$value$plusargs("pmode=%d", pmode)) pmode = 0;
        if (!$value$plusargs("smode=%d", smode)) smode = 0;
        if (!$value$plusargs("qmode=%d", qmode)) qmode = 0;
        if (!$value$plusargs("rmode=%d", rmode)) rmode = 0;
        a_head = 0; a_tail = 0; b_head = 0; b_tail = 0; c_head = 0; c_tail = 0;
        pseq = 0; sseq = 0; cyc = 0;
        plfsr = 16'hACE1; slfsr = 16'hACE1; qlfsr = 16'h1D0F; rlfsr = 16'h1D0F;
        fork
            begin
                #OFF;
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
