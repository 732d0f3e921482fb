// checksum_tb.v: Icarus testbench for the one-clock peer designs (crc32.v,
// decode.v, pipeline.v, router_ring.v, cpu4.v): compile with -DDUT=<module>, and -DDUT_N=<n> for a
// design with a parameter N (the pipeline's stages). Runs
// +cycles=C rising edges (default 1000) and prints the checksum in the
// format run.sh parses.
`timescale 1ns / 1ns
module checksum_tb;
    reg clk = 0;
    wire [63:0] checksum;
    reg [63:0] cycles;

`ifdef DUT_N
    `DUT #(.N(`DUT_N)) dut (.clk(clk), .checksum(checksum));
`else
    `DUT dut (.clk(clk), .checksum(checksum));
`endif

    initial begin
        if (!$value$plusargs("cycles=%d", cycles)) cycles = 1000;
        // The first rising edge comes after time 0, so every always block
        // is already waiting for it.
        repeat (cycles) begin
            #1 clk = 1;
            #1 clk = 0;
        end
        $display("checksum=%0d", checksum);
        $finish;
    end
endmodule
