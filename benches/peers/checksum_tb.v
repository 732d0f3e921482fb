// checksum_tb.v: Icarus testbench for the one-clock peer designs without
// parameters (crc32.v, decode.v): compile with -DDUT=<module>. Runs
// +cycles=C rising edges (default 1000) and prints the checksum in the
// format run.sh parses.
`timescale 1ns / 1ns
module checksum_tb;
    reg clk = 0;
    wire [63:0] checksum;
    reg [63:0] cycles;

    `DUT dut (.clk(clk), .checksum(checksum));

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
