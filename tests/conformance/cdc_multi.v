// cdc_multi.v: the Verilog twin of cdc_multi.chr (tests/conformance.rs),
// written from the timing contract, section 5: three classic asynchronous
// FIFOs (0: wr -> a, 1: wr -> b, 2: b -> c), each with binary and Gray
// pointers carrying a wrap bit, Gray pointers crossing through SYNC-flop
// synchronizers, and registered `full` and `empty` flags computed from the
// next local pointer and the synchronizer tail as it was before the edge.
// The writer writes FIFOs 0 and 1 and a same-domain channel to `e` (latency
// le, capacity ce: a queue of (item, arrival edge)) together or not at all
// (fan-out, section 4), when neither FIFO is full and fewer than ce items
// were in flight on the channel before the edge; `e` runs after the writer
// in the same block, so latency 0 is combinational. FIFOs 0 and 2 have a registered read port (an
// accepted read moves the head into the output register); FIFO 1 is read
// first-word-fall-through.
//
// The FIFO sides are tasks called at the end of each domain's always block,
// so they see the unit's decisions of the same edge; every flop is assigned
// with <=, so all reads see the values from before the time step.
`timescale 1ps / 1ps
module cdc_multi_tb;
    localparam MAXS = 64;
    localparam MAXD = 64;
    localparam NF = 3;
    localparam [63:0] OFF = 64'd100000;

    reg [63:0] limit, wp, wph, xp, xph, yp, yph;
    reg [31:0] wmode, amode, bmode, cmode, emode;
    reg [31:0] depth [0:NF-1];
    reg [31:0] sync [0:NF-1];
    reg wclk = 0;
    reg xclk = 0;
    reg yclk = 0;

    `include "traffic.vh"

    function [31:0] gray(input [31:0] b);
        gray = b ^ (b >> 1);
    endfunction

    // ---- the FIFOs ----
    reg [31:0] mem [0:NF*MAXD-1];
    reg [31:0] wbin [0:NF-1];
    reg [31:0] wgray [0:NF-1];
    reg [31:0] rbin [0:NF-1];
    reg [31:0] rgray [0:NF-1];
    reg [31:0] rq [0:NF*MAXS-1];   // read pointer, synchronized to the writer
    reg [31:0] wq [0:NF*MAXS-1];   // write pointer, synchronized to the reader
    reg full [0:NF-1];
    reg empty [0:NF-1];
    reg [31:0] dout [0:NF-1];      // registered read port
    reg dvalid [0:NF-1];

    // Write side of FIFO f at an edge of its writer's domain.
    task write_side(input integer f, input wen, input [31:0] data);
        reg [31:0] next;
        integer i;
        begin
            if (wen) mem[f * MAXD + wbin[f] % depth[f]] <= data;
            next = (wbin[f] + wen) & (2 * depth[f] - 1);
            wbin[f] <= next;
            wgray[f] <= gray(next);
            rq[f * MAXS] <= rgray[f];
            for (i = 1; i < sync[f]; i = i + 1) rq[f * MAXS + i] <= rq[f * MAXS + i - 1];
            // Full: one lap ahead (in Gray: top two bits differ, rest agree).
            full[f] <= gray(next)
                       == (rq[f * MAXS + sync[f] - 1] ^ (depth[f] | (depth[f] >> 1)));
        end
    endtask

    // Read side of FIFO f at an edge of its reader's domain; `pop` removes
    // the head (an accepted request, or a fwft recv()).
    task read_side(input integer f, input pop);
        reg [31:0] next;
        integer i;
        begin
            next = (rbin[f] + pop) & (2 * depth[f] - 1);
            rbin[f] <= next;
            rgray[f] <= gray(next);
            wq[f * MAXS] <= wgray[f];
            for (i = 1; i < sync[f]; i = i + 1) wq[f * MAXS + i] <= wq[f * MAXS + i - 1];
            empty[f] <= gray(next) == wq[f * MAXS + sync[f] - 1];
        end
    endtask

    function [31:0] head(input integer f);
        head = mem[f * MAXD + rbin[f] % depth[f]];
    endfunction

    // A registered-read sink on FIFO f: take() then request(); returns
    // through the task's outputs what it saw, and updates the port.
    task sink(input integer f, input want_take, input want_req,
              output vld, output got, output [31:0] v, output acc);
        begin
            vld = dvalid[f];
            got = want_take && dvalid[f];
            v = got ? dout[f] : 0;
            acc = want_req && !empty[f] && (!dvalid[f] || got);
            if (acc) dout[f] <= head(f);
            dvalid[f] <= acc || (dvalid[f] && !got);
            read_side(f, acc);
        end
    endtask

    // ---- domain w: writer wr, sink c and drain e ----
    reg [31:0] wcyc, seq;
    reg [15:0] wlfsr, clfsr, elfsr;
    reg want, cs, ok, c_vld, c_got, c_acc, e_pk, e_got;
    reg [31:0] c_v, data, e_v;
    reg [63:0] le, ce, e_head, e_tail, e_before;
    reg [31:0] e_item [0:63];
    reg [63:0] e_arr [0:63];

    always @(posedge wclk) begin
        want = active(wmode, wcyc, wlfsr);
        e_before = e_tail - e_head;
        cs = !full[0] && !full[1] && e_before < ce;
        ok = want && cs;
        data = seq * 32'h9E3779B1 + 7;
        if (ok) begin
            seq <= seq + 1;
            e_item[e_tail % 64] = data;
            e_arr[e_tail % 64] = wcyc + le;
            e_tail = e_tail + 1;
        end
        e_pk = e_head != e_tail && e_arr[e_head % 64] <= wcyc;
        e_got = e_pk && active(emode, wcyc, elfsr);
        e_v = e_got ? e_item[e_head % 64] : 0;
        if (e_got) e_head = e_head + 1;
        write_side(0, ok, data);
        write_side(1, ok, data);
        sink(2, active(cmode, wcyc, clfsr), active(cmode, wcyc + 3, clfsr >> 2),
             c_vld, c_got, c_v, c_acc);
        if ($time - OFF <= limit) begin
            $display("w %0d %0dps T top.c r vld=%0d got=%0d v=%0d acc=%0d",
                     wcyc, $time - OFF, c_vld, c_got, c_v, c_acc);
            $display("w %0d %0dps T top.e e pk=%0d got=%0d v=%0d",
                     wcyc, $time - OFF, e_pk, e_got, e_v);
            $display("w %0d %0dps T top.wr w want=%0d cs=%0d ok=%0d seq=%0d",
                     wcyc, $time - OFF, want, cs, ok, seq);
        end
        wcyc <= wcyc + 1;
        wlfsr <= lfsr_next(wlfsr);
        clfsr <= lfsr_next(clfsr);
        elfsr <= lfsr_next(elfsr);
    end

    // ---- domain x: sink a ----
    reg [31:0] xcyc;
    reg [15:0] alfsr;
    reg a_vld, a_got, a_acc;
    reg [31:0] a_v;

    always @(posedge xclk) begin
        sink(0, active(amode, xcyc, alfsr), active(amode, xcyc + 3, alfsr >> 2),
             a_vld, a_got, a_v, a_acc);
        if ($time - OFF <= limit)
            $display("x %0d %0dps T top.a r vld=%0d got=%0d v=%0d acc=%0d",
                     xcyc, $time - OFF, a_vld, a_got, a_v, a_acc);
        xcyc <= xcyc + 1;
        alfsr <= lfsr_next(alfsr);
    end

    // ---- domain y: relay b (fwft read of FIFO 1, write of FIFO 2) ----
    reg [31:0] ycyc;
    reg [15:0] blfsr;
    reg b_ne, b_cs, b_fwd;
    reg [31:0] b_pv;

    always @(posedge yclk) begin
        b_ne = !empty[1];
        b_pv = b_ne ? head(1) : 0;
        b_cs = !full[2];
        b_fwd = active(bmode, ycyc, blfsr) && b_cs && b_ne;
        read_side(1, b_fwd);
        write_side(2, b_fwd, b_pv ^ 32'h5555);
        if ($time - OFF <= limit)
            $display("y %0d %0dps T top.b f ne=%0d pv=%0d cs=%0d fwd=%0d",
                     ycyc, $time - OFF, b_ne, b_pv, b_cs, b_fwd);
        ycyc <= ycyc + 1;
        blfsr <= lfsr_next(blfsr);
    end

    integer i, f;
    reg [31:0] arg;
    initial begin
        if (!$value$plusargs("limit=%d", limit)) limit = 100000;
        if (!$value$plusargs("wp=%d", wp)) wp = 1000;
        if (!$value$plusargs("wph=%d", wph)) wph = 0;
        if (!$value$plusargs("xp=%d", xp)) xp = 1000;
        if (!$value$plusargs("xph=%d", xph)) xph = 0;
        if (!$value$plusargs("yp=%d", yp)) yp = 1000;
        if (!$value$plusargs("yph=%d", yph)) yph = 0;
        if (!$value$plusargs("wmode=%d", wmode)) wmode = 0;
        if (!$value$plusargs("amode=%d", amode)) amode = 0;
        if (!$value$plusargs("bmode=%d", bmode)) bmode = 0;
        if (!$value$plusargs("cmode=%d", cmode)) cmode = 0;
        if (!$value$plusargs("emode=%d", emode)) emode = 0;
        if (!$value$plusargs("le=%d", le)) le = 1;
        if (!$value$plusargs("ce=%d", ce)) ce = 2;
        if (!$value$plusargs("da=%d", arg)) arg = 4;
        depth[0] = arg;
        if (!$value$plusargs("sa=%d", arg)) arg = 2;
        sync[0] = arg;
        if (!$value$plusargs("db=%d", arg)) arg = 4;
        depth[1] = arg;
        if (!$value$plusargs("sb=%d", arg)) arg = 2;
        sync[1] = arg;
        if (!$value$plusargs("dc=%d", arg)) arg = 4;
        depth[2] = arg;
        if (!$value$plusargs("sc=%d", arg)) arg = 2;
        sync[2] = arg;
        for (i = 0; i < NF * MAXD; i = i + 1) mem[i] = 0;
        for (i = 0; i < NF * MAXS; i = i + 1) begin
            rq[i] = 0;
            wq[i] = 0;
        end
        for (f = 0; f < NF; f = f + 1) begin
            wbin[f] = 0; wgray[f] = 0; rbin[f] = 0; rgray[f] = 0;
            full[f] = 0; empty[f] = 1; dout[f] = 0; dvalid[f] = 0;
        end
        wcyc = 0; seq = 0; wlfsr = 16'hACE1; clfsr = 16'h3C3C; elfsr = 16'h4B1D;
        e_head = 0; e_tail = 0;
        xcyc = 0; alfsr = 16'h1D0F;
        ycyc = 0; blfsr = 16'h7A5B;
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
                #(OFF + xph);
                forever begin
                    xclk = 1;
                    #(xp / 2) xclk = 0;
                    #(xp - xp / 2);
                end
            end
            begin
                #(OFF + yph);
                forever begin
                    yclk = 1;
                    #(yp / 2) yclk = 0;
                    #(yp - yp / 2);
                end
            end
            begin
                #(OFF + limit + 1);
                $finish;
            end
        join
    end
endmodule
