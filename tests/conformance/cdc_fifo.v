// cdc_fifo.v: the Verilog twin of cdc_fifo.chr for the conformance matrix
// (tests/conformance.rs), written from the Chronon timing contract, section 5,
// as the classic asynchronous FIFO: binary and Gray pointers with a wrap bit,
// each Gray pointer crossing through an S-flop synchronizer, registered
// `full` and `empty` computed from the next local pointer and the
// synchronizer tail as it was before the edge, and either a registered read
// port (an accepted read moves the head into `dout`) or a first-word-fall-
// through port (the head is read combinationally while `empty` is clear).
//
// One compiled testbench serves every configuration: clocks, depth,
// synchronizer length, read style and traffic come from plusargs, so the
// pointers are kept modulo 2*DEPTH and the synchronizer is a chain of SYNC
// flops whose tail is flop SYNC-1.
//
// Every always block prints, at each of its edges, one line in the format of
// a Chronon text-log trace record ("<cycle> <time>ps T <unit> <name> k=v"),
// prefixed by its domain, from the values before the edge (non-blocking
// assignments commit after every block of the time step has run, which is
// the contract's evaluate/commit split, section 2).
`timescale 1ps / 1ps
module cdc_fifo_tb;
    localparam MAXS = 64;
    localparam MAXD = 1024;
    // Every edge is shifted by OFF so that the first ones come after time 0,
    // when every always block is already waiting; printed times subtract it.
    localparam [63:0] OFF = 64'd100000;

    reg [63:0] wp, wph, rp, rph, limit;
    reg [31:0] depth, sync, wmode, rmode, order, fwft;

    reg wclk = 0;
    reg rclk = 0;

    `include "traffic.vh"

    function [31:0] gray(input [31:0] b);
        gray = b ^ (b >> 1);
    endfunction

    // Pointers count modulo 2*depth (the wrap bit is the top one).
    function [31:0] incr(input [31:0] b, input en);
        incr = (b + en) & (2 * depth - 1);
    endfunction

    reg [31:0] mem [0:MAXD-1];

    // ---- writer domain: the producer and the FIFO's write side ----
    reg [31:0] wbin, wgray, seq, wcyc;
    reg [31:0] rq [0:MAXS-1];
    reg [15:0] wlfsr;
    reg full;
    reg want, ok;
    reg [31:0] wbin_next;
    integer i;

    always @(posedge wclk) begin
        want = active(wmode, wcyc, wlfsr);
        ok = want && !full;
        if (ok) begin
            mem[wbin % depth] <= seq * 32'h9E3779B1 + 7;
            seq <= seq + 1;
        end
        wbin_next = incr(wbin, ok);
        wbin <= wbin_next;
        wgray <= gray(wbin_next);
        rq[0] <= rgray;
        for (i = 1; i < sync; i = i + 1) rq[i] <= rq[i-1];
        // Full: the next write pointer is one lap ahead of the synchronized
        // read pointer (in Gray: the top two bits differ, the rest agree).
        full <= gray(wbin_next) == (rq[sync-1] ^ (depth | (depth >> 1)));
        if ($time - OFF <= limit)
            $display("w %0d %0dps T top.wr w want=%0d cs=%0d ok=%0d seq=%0d",
                     wcyc, $time - OFF, want, !full, ok, seq);
        wcyc <= wcyc + 1;
        wlfsr <= lfsr_next(wlfsr);
    end

    // ---- reader domain: the FIFO's read side and the consumer ----
    reg [31:0] rbin, rgray, rcyc;
    reg [31:0] wq [0:MAXS-1];
    reg [15:0] rlfsr;
    reg empty;
    reg [31:0] dout;
    reg dvalid;
    reg wt, wr, wr2, got, acc, acc2, t2, freed, again;
    reg [31:0] v, pv;
    reg [31:0] rbin_next;

    always @(posedge rclk) begin
        wt = active(rmode, rcyc, rlfsr);
        wr = active(rmode, rcyc + 3, rlfsr >> 2);
        wr2 = active(rmode, rcyc + 7, rlfsr >> 4);
        got = 0; v = 0; acc = 0; acc2 = 0; t2 = 0; freed = 0; again = 0; pv = 0;
        if (fwft) begin
            // recv(): the head, at most once per edge, while empty is clear.
            if (!empty) pv = mem[rbin % depth];
            if (wt && !empty) begin
                got = 1;
                v = mem[rbin % depth];
            end
            rbin_next = incr(rbin, got);
        end else begin
            // request() is accepted when the FIFO was not empty before the
            // edge, no request was accepted earlier in this tick, and the
            // output register is free: not valid before the edge, or
            // emptied by a take() earlier in this tick.
            if (order == 1 && wr) acc = !empty && !dvalid;
            if (wt && dvalid) begin
                got = 1;
                v = dout;
                freed = 1;
            end
            // A second take() finds the register empty: t2 stays 0.
            if (order == 0 && wr) acc = !empty && (!dvalid || freed);
            if (wr2) acc2 = !acc && !empty && (!dvalid || freed);
            if (acc || acc2) dout <= mem[rbin % depth];
            dvalid <= acc || acc2 || (dvalid && !freed);
            rbin_next = incr(rbin, acc || acc2);
        end
        rbin <= rbin_next;
        rgray <= gray(rbin_next);
        wq[0] <= wgray;
        for (i = 1; i < sync; i = i + 1) wq[i] <= wq[i-1];
        empty <= gray(rbin_next) == wq[sync-1];
        if ($time - OFF <= limit) begin
            if (fwft)
                $display("r %0d %0dps T top.rd f ne=%0d pv=%0d got=%0d v=%0d again=%0d",
                         rcyc, $time - OFF, !empty, pv, got, v, again);
            else
                $display("r %0d %0dps T top.rd r vld=%0d got=%0d v=%0d t2=%0d acc=%0d acc2=%0d",
                         rcyc, $time - OFF, dvalid, got, v, t2, acc, acc2);
        end
        rcyc <= rcyc + 1;
        rlfsr <= lfsr_next(rlfsr);
    end

    // Plusargs first, then the two clocks (edge n of a domain at
    // OFF + phase + n * period) and the stop, in parallel.
    initial begin
        if (!$value$plusargs("wp=%d", wp)) wp = 1000;
        if (!$value$plusargs("wph=%d", wph)) wph = 0;
        if (!$value$plusargs("rp=%d", rp)) rp = 1000;
        if (!$value$plusargs("rph=%d", rph)) rph = 0;
        if (!$value$plusargs("limit=%d", limit)) limit = 100000;
        if (!$value$plusargs("depth=%d", depth)) depth = 4;
        if (!$value$plusargs("sync=%d", sync)) sync = 2;
        if (!$value$plusargs("wmode=%d", wmode)) wmode = 0;
        if (!$value$plusargs("rmode=%d", rmode)) rmode = 0;
        if (!$value$plusargs("order=%d", order)) order = 0;
        if (!$value$plusargs("fwft=%d", fwft)) fwft = 0;
        for (i = 0; i < MAXD; i = i + 1) mem[i] = 0;
        for (i = 0; i < MAXS; i = i + 1) begin
            rq[i] = 0;
            wq[i] = 0;
        end
        wbin = 0; wgray = 0; seq = 0; wcyc = 0; wlfsr = 16'hACE1; full = 0;
        rbin = 0; rgray = 0; rcyc = 0; rlfsr = 16'h1D0F; empty = 1;
        dout = 0; dvalid = 0;
        fork
            begin
                #(OFF + wph);
                forever begin
                    wclk = 1;
                    #(wp / 2) wclk = 0;
                    #(wp - wp / 2);
                end
            end
            begin
                #(OFF + rph);
                forever begin
                    rclk = 1;
                    #(rp / 2) rclk = 0;
                    #(rp - rp / 2);
                end
            end
            begin
                #(OFF + limit + 1);
                $finish;
            end
        join
    end
endmodule
