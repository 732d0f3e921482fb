// async_fifo.v: the Verilog twin of async_fifo.chr (see that file): a
// producer, a classic Cummings-style asynchronous FIFO and a consumer.
//
// The FIFO follows the Chronon timing contract (section 5) flop for flop:
// binary and Gray pointers with a wrap bit; each Gray pointer crosses through
// a two-flop synchronizer; `full` and `empty` are registered, computed from
// the next local pointer and the synchronizer tail as it was before the edge;
// the read port is registered (an accepted read moves the head item into
// `dout`, which the consumer takes at its next edge). Everything starts at
// zero, with `empty` set.
module async_fifo #(parameter ADDR = 4) (
    input  wire        wclk,
    input  wire        rclk,
    output reg  [63:0] checksum,
    output reg  [63:0] received
);
    localparam DEPTH = 1 << ADDR;

    function automatic [31:0] mix(input [31:0] x);
        reg [31:0] y;
        begin
            y = x ^ (x >> 15);
            mix = (y * 32'h2c1b3c6d) ^ (y >> 13);
        end
    endfunction

    reg [31:0] mem [0:DEPTH-1];

    // Writer domain: the producer and the write side of the FIFO.
    reg [31:0]   seq;
    reg [ADDR:0] wbin, wgray, rq1, rq2;
    reg          full;
    wire              write = !full;
    wire [ADDR:0]     wbin_next = wbin + {{ADDR{1'b0}}, write};
    wire [ADDR:0]     wgray_next = (wbin_next >> 1) ^ wbin_next;

    always @(posedge wclk) begin
        if (write) begin
            mem[wbin[ADDR-1:0]] <= mix(seq);
            seq <= seq + 1;
        end
        wbin <= wbin_next;
        wgray <= wgray_next;
        rq1 <= rgray;
        rq2 <= rq1;
        full <= wgray_next == {~rq2[ADDR:ADDR-1], rq2[ADDR-2:0]};
    end

    // Reader domain: the read side of the FIFO and the consumer.
    reg [ADDR:0] rbin, rgray, wq1, wq2;
    reg          empty;
    reg [31:0]   dout;
    reg          dvalid;
    // The consumer takes `dout` whenever it is valid, before it requests, so
    // the output register is always free for a request.
    wire              take = dvalid;
    wire              read = !empty && (!dvalid || take);
    wire [ADDR:0]     rbin_next = rbin + {{ADDR{1'b0}}, read};
    wire [ADDR:0]     rgray_next = (rbin_next >> 1) ^ rbin_next;

    always @(posedge rclk) begin
        if (take) begin
            checksum <= checksum + {32'd0, dout};
            received <= received + 1;
        end
        if (read) dout <= mem[rbin[ADDR-1:0]];
        dvalid <= read || (dvalid && !take);
        rbin <= rbin_next;
        rgray <= rgray_next;
        wq1 <= wgray;
        wq2 <= wq1;
        empty <= rgray_next == wq2;
    end

    integer i;
    initial begin
        for (i = 0; i < DEPTH; i = i + 1) mem[i] = 0;
        seq = 0; wbin = 0; wgray = 0; rq1 = 0; rq2 = 0; full = 0;
        rbin = 0; rgray = 0; wq1 = 0; wq2 = 0; empty = 1; dout = 0; dvalid = 0;
        checksum = 0; received = 0;
    end
endmodule
