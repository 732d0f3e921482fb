// cpu4.v: the Verilog twin of examples/cpu4.chr (see that file) with
// RETIRE past any run; `checksum` is Writeback's checksum counter.
//
// Every channel of the design has latency 1, so every unit decides from
// the state before the edge and every register and channel changes at the
// edge, as the timing contract's section 4 defines them:
// - an item sent at an edge can be received from the next edge on;
// - `can_send` counts the items in flight before the edge plus those sent
//   earlier in the same tick (a slot freed by a receive at an edge counts
//   from the next edge), and an output of rate R sends at most R a tick;
// - the four ALUs' results fan in to Writeback's one input, merged by
//   arrival edge, then connection order (ALU 0 first), then send order.
// Each channel is a ring buffer of its capacity: fetch -> decode (rate 4,
// capacity 8), decode -> ALU i and ALU i -> writeback (capacity 2, the
// default for latency 1), writeback -> fetch (capacity 2). The tick of
// each unit is written as the .chr tick is, one always block for the
// whole edge: reads of the state before it, then the updates.
module cpu4 (
    input  wire        clk,
    output reg  [63:0] checksum
);
    // An instruction: kind (0 add, 1 sub, 2 xor, 3 branch), dst, a, b, pc,
    // epoch; a result: dst, value, branch, pc, epoch, and its send edge.
    localparam FD_CAP = 8;
    localparam CAP = 2;

    function [31:0] mix32(input [31:0] x);
        reg [31:0] y;
        begin
            y = x ^ (x >> 16);
            y = y * 32'h7feb352d;
            y = y ^ (y >> 15);
            y = y * 32'h846ca68b;
            mix32 = y ^ (y >> 16);
        end
    endfunction

    // Fetch.
    reg [31:0] pc;
    reg [7:0]  f_epoch;
    // Fetch -> decode.
    reg [1:0]  fd_kind [0:FD_CAP-1];
    reg [3:0]  fd_dst [0:FD_CAP-1];
    reg [31:0] fd_a [0:FD_CAP-1];
    reg [31:0] fd_b [0:FD_CAP-1];
    reg [31:0] fd_pc [0:FD_CAP-1];
    reg [7:0]  fd_epoch [0:FD_CAP-1];
    reg [3:0]  fd_head, fd_count;
    // Decode -> ALU i: entry i * CAP + k.
    reg [1:0]  da_kind [0:4*CAP-1];
    reg [3:0]  da_dst [0:4*CAP-1];
    reg [31:0] da_a [0:4*CAP-1];
    reg [31:0] da_b [0:4*CAP-1];
    reg [31:0] da_pc [0:4*CAP-1];
    reg [7:0]  da_epoch [0:4*CAP-1];
    reg [1:0]  da_head [0:3];
    reg [1:0]  da_count [0:3];
    // ALU i -> writeback.
    reg [3:0]  aw_dst [0:4*CAP-1];
    reg [31:0] aw_value [0:4*CAP-1];
    reg        aw_branch [0:4*CAP-1];
    reg [31:0] aw_pc [0:4*CAP-1];
    reg [7:0]  aw_epoch [0:4*CAP-1];
    reg [63:0] aw_sent [0:4*CAP-1];
    reg [1:0]  aw_head [0:3];
    reg [1:0]  aw_count [0:3];
    // Writeback -> fetch.
    reg [31:0] wf_target [0:CAP-1];
    reg [1:0]  wf_head, wf_count;
    // Writeback.
    reg [31:0] regs [0:15];
    reg [7:0]  w_epoch;
    reg [31:0] retired;
    reg [63:0] edge_n;

    integer i, k, slot, j;
    initial begin
        checksum = 0;
        pc = 0;
        f_epoch = 0;
        fd_head = 0;
        fd_count = 0;
        wf_head = 0;
        wf_count = 0;
        w_epoch = 0;
        retired = 0;
        edge_n = 0;
        for (i = 0; i < 4; i = i + 1) begin
            da_head[i] = 0;
            da_count[i] = 0;
            aw_head[i] = 0;
            aw_count[i] = 0;
        end
        for (i = 0; i < 16; i = i + 1) regs[i] = 0;
    end

    // The edge's work, in temporaries: what each tick takes and sends.
    reg [31:0] next, w, target, v;
    reg [7:0]  ep, wep;
    reg [3:0]  fd_pushed, fd_taken;
    reg [1:0]  wf_pushed, wf_taken;
    reg [1:0]  da_taken [0:3];
    reg        da_pushed [0:3];
    reg [1:0]  aw_taken [0:3];
    reg        aw_pushed [0:3];
    reg [3:0]  at;
    reg        flushed, found;
    reg [31:0] n;
    reg [63:0] best_sent;
    integer    best;
    reg [3:0]  wb_dst [0:3];
    reg [31:0] wb_value [0:3];
    reg        wb_write [0:3];

    always @(posedge clk) begin
        fd_pushed = 0;
        fd_taken = 0;
        wf_pushed = 0;
        wf_taken = 0;
        for (i = 0; i < 4; i = i + 1) begin
            da_taken[i] = 0;
            da_pushed[i] = 0;
            aw_taken[i] = 0;
            aw_pushed[i] = 0;
            wb_write[i] = 0;
        end

        // Writeback, from the results that arrived before this edge.
        wep = w_epoch;
        n = retired;
        flushed = 0;
        for (k = 0; k < 4; k = k + 1) begin
            // The oldest result: arrival edge, then connection order.
            found = 0;
            best = 0;
            best_sent = 0;
            for (j = 0; j < 4; j = j + 1) begin
                if (aw_taken[j] < aw_count[j]) begin
                    at = j * CAP + (aw_head[j] + aw_taken[j]) % CAP;
                    if (!found || aw_sent[at] < best_sent) begin
                        found = 1;
                        best = j;
                        best_sent = aw_sent[at];
                    end
                end
            end
            if (found) begin
                at = best * CAP + (aw_head[best] + aw_taken[best]) % CAP;
                aw_taken[best] = aw_taken[best] + 1;
                if (aw_epoch[at] != wep) begin
                    // squashed
                end else if (aw_branch[at] && aw_value[at] == 0 && !flushed) begin
                    if (wf_count + wf_pushed < CAP && wf_pushed < 1) begin
                        wf_target[(wf_head + wf_count + wf_pushed) % CAP] = aw_pc[at] + 64;
                        wf_pushed = wf_pushed + 1;
                        wep = wep + 1;
                        flushed = 1;
                    end
                    n = n + 1;
                    checksum = checksum + (({aw_pc[at], 32'd0}) ^ {32'd0, aw_value[at]});
                end else begin
                    wb_write[k] = 1;
                    wb_dst[k] = aw_dst[at];
                    wb_value[k] = aw_value[at];
                    n = n + 1;
                    checksum = checksum + (({aw_pc[at], 32'd0}) ^ {32'd0, aw_value[at]});
                end
            end
        end

        // The ALUs, each from its own channel.
        for (i = 0; i < 4; i = i + 1) begin
            if (aw_count[i] < CAP && da_count[i] != 0) begin
                at = i * CAP + da_head[i];
                da_taken[i] = 1;
                case (da_kind[at])
                    2'd0: v = da_a[at] + da_b[at];
                    2'd1: v = da_a[at] - da_b[at];
                    2'd2: v = da_a[at] ^ da_b[at];
                    default: v = da_a[at] & 32'd7;
                endcase
                j = i * CAP + (aw_head[i] + aw_count[i]) % CAP;
                aw_dst[j] = da_dst[at];
                aw_value[j] = v;
                aw_branch[j] = da_kind[at] == 2'd3;
                aw_pc[j] = da_pc[at];
                aw_epoch[j] = da_epoch[at];
                aw_sent[j] = edge_n;
                aw_pushed[i] = 1;
            end
        end

        // Decode: ALU 0 to 3, each with room, takes the next instruction.
        for (i = 0; i < 4; i = i + 1) begin
            if (da_count[i] < CAP && fd_taken < fd_count) begin
                at = (fd_head + fd_taken) % FD_CAP;
                fd_taken = fd_taken + 1;
                j = i * CAP + (da_head[i] + da_count[i]) % CAP;
                da_kind[j] = fd_kind[at];
                da_dst[j] = fd_dst[at];
                da_a[j] = fd_a[at];
                da_b[j] = fd_b[at];
                da_pc[j] = fd_pc[at];
                da_epoch[j] = fd_epoch[at];
                da_pushed[i] = 1;
            end
        end

        // Fetch: a redirect first, then up to four instructions.
        next = pc;
        ep = f_epoch;
        if (wf_count != 0) begin
            next = wf_target[wf_head];
            wf_taken = 1;
            ep = f_epoch + 1;
        end
        for (slot = 0; slot < 4; slot = slot + 1) begin
            if (fd_count + fd_pushed < FD_CAP) begin
                w = mix32(next);
                j = (fd_head + fd_count + fd_pushed) % FD_CAP;
                fd_kind[j] = w[1:0];
                fd_dst[j] = w[7:4];
                fd_a[j] = w >> 8;
                fd_b[j] = next + slot;
                fd_pc[j] = next;
                fd_epoch[j] = ep;
                fd_pushed = fd_pushed + 1;
                next = next + 1;
            end
        end

        // The edge's updates.
        pc = next;
        f_epoch = ep;
        for (k = 0; k < 4; k = k + 1)
            if (wb_write[k]) regs[wb_dst[k]] = wb_value[k];
        w_epoch = wep;
        retired = n;
        fd_head = (fd_head + fd_taken) % FD_CAP;
        fd_count = fd_count + fd_pushed - fd_taken;
        wf_head = (wf_head + wf_taken) % CAP;
        wf_count = wf_count + wf_pushed - wf_taken;
        for (i = 0; i < 4; i = i + 1) begin
            da_head[i] = (da_head[i] + da_taken[i]) % CAP;
            da_count[i] = da_count[i] + da_pushed[i] - da_taken[i];
            aw_head[i] = (aw_head[i] + aw_taken[i]) % CAP;
            aw_count[i] = aw_count[i] + aw_pushed[i] - aw_taken[i];
        end
        edge_n = edge_n + 1;
    end
endmodule
