// async_fifo_tb.v: Icarus testbench for async_fifo.v. Runs +cycles=C edges
// of the writer clock (default 1000) and every reader edge up to the last of
// them, then prints the counters in the format run.sh parses.
//
// Times are doubled (1 unit = 0.5 ps) so that every edge falls on an even
// unit and the stop at an odd unit can never coincide with one; everything
// is also shifted by 2000 units so that the first edges come after time 0,
// when every always block is already waiting.
`timescale 1ps / 1ps
module async_fifo_tb;
    reg wclk = 0;
    reg rclk = 0;
    wire [63:0] checksum;
    wire [63:0] received;
    reg [63:0] cycles;

    async_fifo dut (.wclk(wclk), .rclk(rclk), .checksum(checksum), .received(received));

    // Writer: period 1094 ps (2188 units), edge n at 2000 + 2188 n.
    initial begin
        #2000;
        forever begin
            wclk = 1;
            #1094 wclk = 0;
            #1094;
        end
    end

    // Reader: period 754 ps, phase 137 ps (1508 and 274 units).
    initial begin
        #2274;
        forever begin
            rclk = 1;
            #754 rclk = 0;
            #754;
        end
    end

    initial begin
        if (!$value$plusargs("cycles=%d", cycles)) cycles = 1000;
        #(2000 + (cycles - 1) * 2188 + 1);
        $display("checksum=%0d received=%0d", checksum, received);
        $finish;
    end
endmodule
