// xorshift.vh: the 64-bit xorshift step the single-clock twins share with
// their Chronon designs (`fn xorshift` there), included inside each
// testbench module.

    function [63:0] xorshift(input [63:0] x);
        reg [63:0] y;
        begin
            y = x ^ (x << 13);
            y = y ^ (y >> 7);
            xorshift = y ^ (y << 17);
        end
    endfunction
