// router_ring.v: the Verilog twin of examples/router_ring.chr (see that
// file) with COUNT and BUDGET past any run, for N routers; `checksum` is
// router 0's checksum counter. The channels are modelled as the timing
// contract's section 4 defines them, with latency 1: an item sent at an
// edge can be received from the next edge on; `can_send` counts the
// items in flight before the edge (capacity 4 for packets); a slot freed
// at an edge counts from the next one. A credit channel (the default
// capacity, 2) never holds more than one credit, since a router returns at
// most one per edge and takes one back at every edge, so its `send` is
// never refused and it is a count here. Every
// router decides from the state before the edge (combinational logic), and
// every register, router and channel alike, changes at the edge.
module router_ring #(parameter N = 4) (
    input  wire        clk,
    output reg  [63:0] checksum
);
    localparam [31:0] COUNT = 32'hffff_ffff;
    localparam [7:0] CREDITS = 8'd4;
    localparam CAP = 4;

    // Router state (a packet is {src[47:40], dst[39:32], seq[31:0]}).
    reg [47:0] held [0:N-1];
    reg        held_valid [0:N-1];
    reg [7:0]  credits [0:N-1];
    reg [31:0] seq [0:N-1];
    reg [31:0] cycles [0:N-1];

    // Packet channel g, router g to router g + 1: a ring buffer.
    reg [47:0] pq [0:N*CAP-1];
    reg [2:0]  phead [0:N-1];
    reg [2:0]  pcount [0:N-1];
    // Credit channel g, router g + 1 to router g: its items are all 1.
    reg [1:0]  ccount [0:N-1];

    integer i;
    initial begin
        checksum = 0;
        for (i = 0; i < N; i = i + 1) begin
            held[i] = 0;
            held_valid[i] = 0;
            credits[i] = CREDITS;
            seq[i] = 0;
            cycles[i] = 0;
            phead[i] = 0;
            pcount[i] = 0;
            ccount[i] = 0;
        end
        for (i = 0; i < N * CAP; i = i + 1) pq[i] = 0;
    end

    // Each router's decisions at this edge, from the state before it.
    wire [N-1:0] take;
    wire [N-1:0] deliver;

    genvar g;
    generate
        for (g = 0; g < N; g = g + 1) begin : router
            localparam integer PREV = (g + N - 1) % N;
            localparam integer NEXT = (g + 1) % N;
            wire [47:0] incoming = pq[PREV * CAP + phead[PREV]];
            // The credit that came back, then the held packet onwards.
            wire [7:0] c0 = credits[g] + (ccount[g] != 0 ? 8'd1 : 8'd0);
            wire send = held_valid[g] && c0 > 0 && pcount[g] < CAP;
            wire [7:0] c1 = c0 - (send ? 8'd1 : 8'd0);
            wire hv1 = held_valid[g] && !send;
            // An incoming packet when the hold is free.
            assign take[g] = !hv1 && pcount[PREV] != 0;
            assign deliver[g] = take[g] && incoming[39:32] == g;
            wire forward = take[g] && !deliver[g];
            // A local packet, keeping one credit for through traffic.
            wire inject = !(hv1 || forward) && seq[g] < COUNT && c1 >= 2;
            wire [31:0] hop = seq[g] % (N - 1);
            wire [7:0] dst = (g + 1 + hop) % N;
            wire [47:0] fresh = {g[7:0], dst, seq[g]};

            always @(posedge clk) begin
                held[g] <= inject ? fresh : forward ? incoming : held[g];
                held_valid[g] <= hv1 || forward || inject;
                credits[g] <= c1;
                if (inject) seq[g] <= seq[g] + 1;
                cycles[g] <= cycles[g] + 1;
                // Channel g: router g sends, router g + 1 takes.
                if (send) pq[g * CAP + (phead[g] + pcount[g]) % CAP] <= held[g];
                if (take[NEXT]) phead[g] <= (phead[g] + 3'd1) % CAP;
                pcount[g] <= pcount[g] + (send ? 3'd1 : 3'd0) - (take[NEXT] ? 3'd1 : 3'd0);
                // Credit channel g: router g + 1 returns one per packet it
                // takes; router g takes one back at every edge it can.
                ccount[g] <= ccount[g] + (take[NEXT] ? 2'd1 : 2'd0)
                    - (ccount[g] != 0 ? 2'd1 : 2'd0);
                if (g == 0 && deliver[g])
                    checksum <= checksum + ({cycles[g], 32'd0} ^ {16'd0, incoming[47:40], 24'd0}
                        ^ {32'd0, incoming[31:0]});
            end
        end
    endgenerate
endmodule
