// Test bench of sorted_list.v: replays a path trace recorded from reconverge's `simty` (or `arbiter`)
// mechanism (`reconverge trace --export-paths FILE`) and checks, at every step, that HCT x of the
// stepped warp, the path the unit runs next, is the path the mechanism chose. Steps are driven in the
// trace's order as soon as their warp is ready, so the background sorter of one warp runs while other
// warps step (and has swaps cancelled by their insertions and extractions); a step's result is checked
// when its warp is ready again (before its next step, or at the end).
//
//   iverilog -g2005 -I hw/tb -P tb_sorted_list.W=4 -P tb_sorted_list.NWARPS=8 -o sl.vvp \
//       hw/tb/tb_sorted_list.v hw/sorted_list.v hw/ccs.v && vvp sl.vvp +trace=FILE
//
// Prints one line starting PASS or FAIL with the counts.
`timescale 1ns / 1ps
`default_nettype none

module tb_sorted_list;
    parameter W = 4;
    parameter NWARPS = 8;
    parameter PC_BITS = 30;
    parameter DEPTH_BITS = 8;
    localparam WB = (NWARPS > 1) ? $clog2(NWARPS) : 1;
    localparam MAXP = 64;      // successor paths of one step
    localparam TIMEOUT = 100000;

    reg clk = 1'b0;
    always #5 clk = ~clk;
    reg rst = 1'b1;
    reg init_en = 1'b0, step_en = 1'b0, step_keep_x = 1'b0;
    reg [WB-1:0] init_warp = 0, step_warp = 0, q_warp = 0;
    reg [PC_BITS-1:0] init_pc = 0, a_pc = 0, b_pc = 0;
    reg [DEPTH_BITS-1:0] a_depth = 0, b_depth = 0;
    reg [W-1:0] init_mask = 0, a_mask = 0, b_mask = 0;
    wire q_ready;
    wire [PC_BITS-1:0] q_pc;
    wire [DEPTH_BITS-1:0] q_depth;
    wire [W-1:0] q_mask;
    wire ev_swap, ev_cancel;

    sorted_list #(.W(W), .NWARPS(NWARPS), .PC_BITS(PC_BITS), .DEPTH_BITS(DEPTH_BITS)) dut (
        .clk(clk), .rst(rst),
        .init_en(init_en), .init_warp(init_warp), .init_pc(init_pc), .init_mask(init_mask),
        .step_en(step_en), .step_warp(step_warp), .step_keep_x(step_keep_x),
        .a_pc(a_pc), .a_depth(a_depth), .a_mask(a_mask), .b_pc(b_pc), .b_depth(b_depth), .b_mask(b_mask),
        .q_warp(q_warp), .q_ready(q_ready), .q_pc(q_pc), .q_depth(q_depth), .q_mask(q_mask),
        .ev_swap(ev_swap), .ev_cancel(ev_cancel)
    );

    integer fd;

    reg [1023:0] file;
    `include "trace_reader.vh"
    integer tag, r, j, ns, t;
    integer tw, twarps, w, pc, d;
    reg [63:0] m;
    integer spc [0:MAXP-1];
    integer sd [0:MAXP-1];
    reg [63:0] sm [0:MAXP-1];
    integer npc [0:NWARPS-1];
    integer nd [0:NWARPS-1];
    reg [63:0] nm [0:NWARPS-1];
    reg [NWARPS-1:0] expect = 0;
    integer steps = 0, fails = 0, issue_fails = 0, wait_cycles = 0, swaps = 0, cancels = 0;
    reg bad_header = 1'b0;

    always @(posedge clk) begin
        if (ev_swap) swaps = swaps + 1;
        if (ev_cancel) cancels = cancels + 1;
    end

    // Waits (from a negative edge) until warp `ww` may be stepped.
    task wait_ready;
        input integer ww;
        begin
            q_warp = ww;
            #1;
            t = 0;
            while (!q_ready && t < TIMEOUT) begin
                @(negedge clk);
                #1;
                t = t + 1;
                wait_cycles = wait_cycles + 1;
            end
            if (!q_ready)
                $display("FAIL: warp %0d never became ready", ww);
            @(negedge clk);
        end
    endtask

    // Compares warp ww's HCT x (the warp is ready) with the next path recorded at its last step.
    integer checked = 0;
    task check;
        input integer ww;
        begin
            if (expect[ww]) begin
                if (q_mask != nm[ww][W-1:0] || (nm[ww] != 0 && (q_pc != npc[ww] || q_depth != nd[ww]))) begin
                    if (fails < 5)
                        $display("warp %0d: expected next pc %0d depth %0d mask %h, unit has pc %0d depth %0d mask %h",
                                 ww, npc[ww], nd[ww], nm[ww][W-1:0], q_pc, q_depth, q_mask);
                    fails = fails + 1;
                end
                checked = checked + 1;
                expect[ww] = 1'b0;
            end
        end
    endtask

    initial begin
        open_trace;
        repeat (2) @(negedge clk);
        rst = 1'b0;
        tag = next_tag(0);
        while (tag != -1) begin
            if (tag == "h") begin
                r = $fscanf(fd, "%d %d", tw, twarps);
                if (tw != W || twarps > NWARPS) begin
                    $display("FAIL: the trace has warp size %0d and %0d warps; this bench is W=%0d NWARPS=%0d",
                             tw, twarps, W, NWARPS);
                    bad_header = 1'b1;
                end
            end else if (tag == "i") begin
                r = $fscanf(fd, "%d %d %h", w, pc, m);
                init_en = 1'b1;
                init_warp = w;
                init_pc = pc;
                init_mask = m[W-1:0];
                @(negedge clk);
                init_en = 1'b0;
            end else if (tag == "s") begin
                r = $fscanf(fd, "%d %d %d %h", w, pc, d, m);
                ns = 0;
                tag = next_tag(0);
                while (tag == "p") begin
                    r = $fscanf(fd, "%d %d %h", spc[ns], sd[ns], sm[ns]);
                    ns = ns + 1;
                    tag = next_tag(0);
                end
                // The previous step of this warp: the unit must have chosen the recorded next path.
                wait_ready(w);
                check(w);
                r = $fscanf(fd, "%d %d %h", npc[w], nd[w], nm[w]);
                expect[w] = 1'b1;
                // The unit must be about to run the issued path.
                if (q_mask != m[W-1:0] || q_pc != pc || q_depth != d) begin
                    if (issue_fails < 5)
                        $display("step %0d warp %0d: issued pc %0d depth %0d mask %h, unit had pc %0d depth %0d mask %h",
                                 steps, w, pc, d, m[W-1:0], q_pc, q_depth, q_mask);
                    issue_fails = issue_fails + 1;
                end
                // Successors a and b, then any further ones with x recirculated.
                step_en = 1'b1;
                step_warp = w;
                step_keep_x = 1'b0;
                a_mask = 0;
                b_mask = 0;
                if (ns > 0) begin a_pc = spc[0]; a_depth = sd[0]; a_mask = sm[0][W-1:0]; end
                if (ns > 1) begin b_pc = spc[1]; b_depth = sd[1]; b_mask = sm[1][W-1:0]; end
                @(negedge clk);
                step_en = 1'b0;
                for (j = 2; j < ns; j = j + 1) begin
                    wait_ready(w);
                    step_en = 1'b1;
                    step_keep_x = 1'b1;
                    b_pc = spc[j];
                    b_depth = sd[j];
                    b_mask = sm[j][W-1:0];
                    @(negedge clk);
                    step_en = 1'b0;
                    step_keep_x = 1'b0;
                end
                steps = steps + 1;
            end else begin
                $display("FAIL: unknown record `%c`", tag);
                bad_header = 1'b1;
                tag = -1;
            end
            if (tag != -1)
                tag = next_tag(0);
        end
        for (w = 0; w < NWARPS; w = w + 1) begin
            wait_ready(w);
            check(w);
        end
        if (checked != steps)
            bad_header = 1'b1;
        if (fails == 0 && issue_fails == 0 && !bad_header && steps > 0)
            $display("PASS sorted_list W=%0d: %0d steps agree (wait cycles %0d, sorter swaps %0d, cancelled %0d)",
                     W, steps, wait_cycles, swaps, cancels);
        else
            $display("FAIL sorted_list W=%0d: %0d of %0d steps differ, %0d issued paths differ",
                     W, fails, steps, issue_fails);
        $finish;
    end
endmodule

`default_nettype wire
