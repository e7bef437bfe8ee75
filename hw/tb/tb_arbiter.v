// Test bench of arbiter.v: replays a path trace recorded from reconverge's `arbiter` (or `simty`)
// mechanism (`reconverge trace --export-paths FILE`): each step's issued threads and successor paths
// update the per-thread table, then the arbitration of the stepped warp must select the path the
// mechanism chose (pc, call depth and mask).
//
//   iverilog -g2005 -I hw/tb -P tb_arbiter.W=4 -P tb_arbiter.NWARPS=8 -o arb.vvp \
//       hw/tb/tb_arbiter.v hw/arbiter.v && vvp arb.vvp +trace=FILE
//
// Prints one line starting PASS or FAIL with the counts.
`timescale 1ns / 1ps
`default_nettype none

module tb_arbiter;
    parameter W = 4;
    parameter NWARPS = 8;
    parameter PC_BITS = 30;
    parameter DEPTH_BITS = 8;
    localparam WB = (NWARPS > 1) ? $clog2(NWARPS) : 1;
    localparam MAXP = 64;

    reg clk = 1'b0;
    always #5 clk = ~clk;
    reg rst = 1'b1;
    reg init_en = 1'b0, upd_en = 1'b0;
    reg [WB-1:0] init_warp = 0, upd_warp = 0, sel_warp = 0;
    reg [PC_BITS-1:0] init_pc = 0, a_pc = 0, b_pc = 0;
    reg [DEPTH_BITS-1:0] a_depth = 0, b_depth = 0;
    reg [W-1:0] init_mask = 0, upd_kill = 0, a_mask = 0, b_mask = 0;
    wire [PC_BITS-1:0] sel_pc;
    wire [DEPTH_BITS-1:0] sel_depth;
    wire [W-1:0] sel_mask;

    arbiter #(.W(W), .NWARPS(NWARPS), .PC_BITS(PC_BITS), .DEPTH_BITS(DEPTH_BITS)) dut (
        .clk(clk), .rst(rst),
        .init_en(init_en), .init_warp(init_warp), .init_pc(init_pc), .init_mask(init_mask),
        .upd_en(upd_en), .upd_warp(upd_warp), .upd_kill(upd_kill),
        .a_pc(a_pc), .a_depth(a_depth), .a_mask(a_mask), .b_pc(b_pc), .b_depth(b_depth), .b_mask(b_mask),
        .sel_warp(sel_warp), .sel_pc(sel_pc), .sel_depth(sel_depth), .sel_mask(sel_mask)
    );

    integer fd;

    reg [1023:0] file;
    `include "trace_reader.vh"
    integer tag, r, j, ns;
    integer tw, twarps, w, pc, d, npc, nd;
    reg [63:0] m, nm;
    integer spc [0:MAXP-1];
    integer sd [0:MAXP-1];
    reg [63:0] sm [0:MAXP-1];
    integer steps = 0, fails = 0, issue_fails = 0;
    reg bad = 1'b0;

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
                    bad = 1'b1;
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
                r = $fscanf(fd, "%d %d %h", npc, nd, nm);
                // The arbiter must select the issued path before the update.
                sel_warp = w;
                @(negedge clk);
                if (sel_mask != m[W-1:0] || sel_pc != pc || sel_depth != d) begin
                    if (issue_fails < 5)
                        $display("step %0d warp %0d: issued pc %0d depth %0d mask %h, arbiter selects pc %0d depth %0d mask %h",
                                 steps, w, pc, d, m[W-1:0], sel_pc, sel_depth, sel_mask);
                    issue_fails = issue_fails + 1;
                end
                // The update: two successor paths per cycle.
                upd_en = 1'b1;
                upd_warp = w;
                upd_kill = m[W-1:0];
                j = 0;
                while (j == 0 || j < ns) begin
                    a_mask = 0;
                    b_mask = 0;
                    if (j < ns) begin a_pc = spc[j]; a_depth = sd[j]; a_mask = sm[j][W-1:0]; end
                    if (j + 1 < ns) begin b_pc = spc[j+1]; b_depth = sd[j+1]; b_mask = sm[j+1][W-1:0]; end
                    @(negedge clk);
                    upd_kill = 0;
                    j = j + 2;
                end
                upd_en = 1'b0;
                // The next path: the selection registered one cycle after the update.
                @(negedge clk);
                if (sel_mask != nm[W-1:0] || (nm != 0 && (sel_pc != npc || sel_depth != nd))) begin
                    if (fails < 5)
                        $display("step %0d warp %0d: expected next pc %0d depth %0d mask %h, arbiter selects pc %0d depth %0d mask %h",
                                 steps, w, npc, nd, nm[W-1:0], sel_pc, sel_depth, sel_mask);
                    fails = fails + 1;
                end
                steps = steps + 1;
            end else begin
                $display("FAIL: unknown record `%c`", tag);
                bad = 1'b1;
                tag = -1;
            end
            if (tag != -1)
                tag = next_tag(0);
        end
        if (fails == 0 && issue_fails == 0 && !bad && steps > 0)
            $display("PASS arbiter W=%0d: %0d steps agree", W, steps);
        else
            $display("FAIL arbiter W=%0d: %0d of %0d steps differ, %0d issued paths differ", W, fails, steps, issue_fails);
        $finish;
    end
endmodule

`default_nettype wire
