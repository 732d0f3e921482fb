// xorshift32 (shifts 13, 17, 5), the stimulus of the twins in this folder;
// their designs step the same function.
function [31:0] xorshift32(input [31:0] v);
  reg [31:0] y;
  begin
    y = v ^ (v << 13);
    y = y ^ (y >> 17);
    xorshift32 = y ^ (y << 5);
  end
endfunction
