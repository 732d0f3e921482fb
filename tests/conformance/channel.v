// channel.v: the Verilog twin of channel.chr (tests/conformance.rs), written
// from the timing contract, section 4: a channel of latency L and capacity C
// as a queue of (item, arrival edge). can_send() is "fewer than C items in
// flight before the edge"; recv() and peek() see the oldest item whose
// arrival edge has come; latency 0 delivers in the same edge because the
// producer's part of the block runs first.
//
// Producer and consumer share one always block (one domain); the queue is
// updated with blocking assignments after the in-flight count was taken, so
// a slot freed at edge n counts from edge n + 1. L, C and the traffic modes
// come from plusargs.
`timescale 1ps / 1ps
module channel_tb;
    localparam [63:0] OFF = 64'd100000;
    localparam [63:0] PERIOD = 64'd1000;
    localparam QN = 64;

    reg [63:0] limit, lat, cap;
    reg [31:0] pmode, qmode;
    reg clk = 0;
    reg [63:0] now;

    `include "traffic.vh"

    // The channel.
    reg [31:0] item [0:QN-1];
    reg [63:0] arrival [0:QN-1];
    reg [63:0] head, tail, in_flight;

    // Producer p and consumer q.
    reg [31:0] pcyc, qcyc, seq;
    reg [15:0] plfsr, qlfsr;
    reg want, cs, ok, qwant, pk, got;
    reg [31:0] pv, v;

    always @(posedge clk) begin
        now = $time - OFF;
        in_flight = tail - head;
        // Producer (ticks first: it is the sender of a latency-0 link).
        want = active(pmode, pcyc, plfsr);
        cs = in_flight < cap;
        ok = want && cs;
        if (ok) begin
            item[tail % QN] = seq * 32'h9E3779B1 + 3;
            arrival[tail % QN] = pcyc + lat;
            tail = tail + 1;
            seq <= seq + 1;
        end
        // Consumer.
        qwant = active(qmode, qcyc, qlfsr);
        pk = head != tail && arrival[head % QN] <= qcyc;
        pv = pk ? item[head % QN] : 0;
        got = qwant && pk;
        v = got ? pv : 0;
        if (got) head = head + 1;
        // Record order within an edge: by unit instance path (top.p, top.q).
        if (now <= limit) begin
            $display("clk %0d %0dps T top.p s want=%0d cs=%0d ok=%0d seq=%0d",
                     pcyc, now, want, cs, ok, seq);
            $display("clk %0d %0dps T top.q d pk=%0d pv=%0d got=%0d v=%0d",
                     qcyc, now, pk, pv, got, v);
        end
        pcyc <= pcyc + 1;
        plfsr <= lfsr_next(plfsr);
        qcyc <= qcyc + 1;
        qlfsr <= lfsr_next(qlfsr);
    end

    initial begin
        if (!$value$plusargs("limit=%d", limit)) limit = 100000;
        if (!$value$plusargs("lat=%d", lat)) lat = 1;
        if (!$value$plusargs("cap=%d", cap)) cap = 2;
        if (!$value$plusargs("pmode=%d", pmode)) pmode = 0;
        if (!$value$plusargs("qmode=%d", qmode)) qmode = 0;
        head = 0; tail = 0;
        pcyc = 0; qcyc = 0; seq = 0; plfsr = 16'hACE1; qlfsr = 16'h1D0F;
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
