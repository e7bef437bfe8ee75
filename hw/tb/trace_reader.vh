// Shared by the test benches: reading a path trace written by `reconverge trace --export-paths`
// (format: docs/hardware.md). Included inside a bench module that declares `fd` and `file`.

// Opens the trace named by `+trace=FILE` into `fd`, or fails the bench.
task open_trace;
    begin
        if (!$value$plusargs("trace=%s", file)) begin
            $display("FAIL: no +trace=FILE");
            $finish;
        end
        fd = $fopen(file, "r");
        if (fd == 0) begin
            $display("FAIL: cannot open the trace");
            $finish;
        end
    end
endtask

// The next character that is not white space, skipping comment lines (-1 at the end of the file).
function integer next_tag;
    input integer dummy;
    integer ch;
    begin
        ch = $fgetc(fd);
        while (ch == " " || ch == "\n" || ch == "\r" || ch == "\t" || ch == "#") begin
            if (ch == "#")
                while (ch != "\n" && ch != -1)
                    ch = $fgetc(fd);
            ch = $fgetc(fd);
        end
        next_tag = ch;
    end
endfunction
