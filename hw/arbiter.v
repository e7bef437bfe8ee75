// Per-thread pc arbitration (seed 003 section 3.1). docs/hardware.md describes the design and every
// choice the seed leaves open.
//
// Every thread has a valid bit, a pc and a call depth, kept in a table indexed by warp whose rows hold
// the W threads of a warp; the seed notes that such wide and shallow memories are flip-flops on this
// FPGA generation, and so are they here. The table returns the row of the selecting warp; a reduction
// tree of W - 1 nodes (each a magnitude comparator and a 2:1 multiplexer over the key {~depth, pc})
// finds the maximum call depth, then the minimum pc, and W equality comparators against the winner form
// the mask of the threads at it. The selection is registered: sel_* reflect sel_warp of the previous
// cycle.
//
// Updates: init_en (a warp starts) takes priority over upd_en. The branch unit gives the issued threads (upd_kill: their entries are cleared unless a
// successor path names them, so exited threads drop out) and up to two successor paths a and b whose
// threads take the path's pc and depth. More successor paths are further updates with upd_kill empty.
`default_nettype none

module arbiter #(
    parameter W = 4,            // threads per warp (2..64, a power of two)
    parameter NWARPS = 8,       // warps
    parameter PC_BITS = 30,     // pc width
    parameter DEPTH_BITS = 8,   // call-depth width
    parameter WB = (NWARPS > 1) ? $clog2(NWARPS) : 1  // derived: warp-number bits (do not override)
) (
    input  wire                  clk,
    input  wire                  rst,
    // A warp starts: its threads init_mask at init_pc, call depth 0; the others invalid.
    input  wire                  init_en,
    input  wire [WB-1:0]         init_warp,
    input  wire [PC_BITS-1:0]    init_pc,
    input  wire [W-1:0]          init_mask,
    // The branch unit's update of warp upd_warp.
    input  wire                  upd_en,
    input  wire [WB-1:0]         upd_warp,
    input  wire [W-1:0]          upd_kill,
    input  wire [PC_BITS-1:0]    a_pc,
    input  wire [DEPTH_BITS-1:0] a_depth,
    input  wire [W-1:0]          a_mask,
    input  wire [PC_BITS-1:0]    b_pc,
    input  wire [DEPTH_BITS-1:0] b_depth,
    input  wire [W-1:0]          b_mask,
    // Arbitration for sel_warp (result on the next cycle; sel_mask empty when no thread is valid).
    input  wire [WB-1:0]         sel_warp,
    output reg  [PC_BITS-1:0]    sel_pc,
    output reg  [DEPTH_BITS-1:0] sel_depth,
    output reg  [W-1:0]          sel_mask
);
    localparam KB = PC_BITS + DEPTH_BITS;
    localparam N = NWARPS * W;

    // The table: a valid bit and a key {~depth, pc} per thread, flip-flops.
    reg [N-1:0]    tv;
    reg [N*KB-1:0] tk;

    genvar t, i, l;
    // The write port: per thread (lane) one data word shared by every warp's row, and per slot an
    // enable. A thread named by no successor path is cleared when it issued (upd_kill).
    wire [W*KB-1:0] wd;
    wire [W-1:0]    wv;
    wire [W-1:0]    wl;
    generate
        for (l = 0; l < W; l = l + 1) begin : lane
            assign wd[l*KB +: KB] = init_en ? {{DEPTH_BITS{1'b1}}, init_pc}
                                  : a_mask[l] ? {~a_depth, a_pc} : {~b_depth, b_pc};
            assign wv[l] = init_en ? init_mask[l] : (a_mask[l] | b_mask[l]);
            assign wl[l] = init_en | a_mask[l] | b_mask[l] | upd_kill[l];
        end
        for (t = 0; t < N; t = t + 1) begin : slot
            wire we = (init_en ? (init_warp == t / W) : (upd_en && upd_warp == t / W)) & wl[t % W];
            always @(posedge clk) begin
                if (rst)
                    tv[t] <= 1'b0;
                else if (we)
                    tv[t] <= wv[t % W];
                if (we)
                    tk[t*KB +: KB] <= wd[(t % W)*KB +: KB];
            end
        end
    endgenerate

    // The row of the selecting warp (an NWARPS:1 multiplexer).
    reg [W-1:0]    rv;
    reg [W*KB-1:0] rk;
    integer g;
    always @* begin
        rv = {W{1'b0}};
        rk = {W*KB{1'b0}};
        for (g = 0; g < NWARPS; g = g + 1)
            if (sel_warp == g) begin
                rv = tv[g*W +: W];
                rk = tk[g*W*KB +: W*KB];
            end
    end

    // Reduction tree, heap-ordered: node j < W-1 has children 2j+1 and 2j+2; leaf W-1+l is thread l.
    // Each node is a magnitude comparator and a 2:1 multiplexer (and an OR of the valid bits).
    generate
        for (i = 0; i < 2 * W - 1; i = i + 1) begin : heap
            wire          v;
            wire [KB-1:0] k;
            if (i >= W - 1) begin : leaf
                assign v = rv[i-(W-1)];
                assign k = rk[(i-(W-1))*KB +: KB];
            end else begin : node
                wire left = heap[2*i+1].v & (~heap[2*i+2].v | (heap[2*i+1].k <= heap[2*i+2].k));
                assign v = heap[2*i+1].v | heap[2*i+2].v;
                assign k = left ? heap[2*i+1].k : heap[2*i+2].k;
            end
        end
    endgenerate
    wire [KB-1:0] win = heap[0].k;

    // The mask: threads whose key equals the winner's.
    wire [W-1:0] m;
    generate
        for (l = 0; l < W; l = l + 1) begin : eq
            assign m[l] = rv[l] & (rk[l*KB +: KB] == win);
        end
    endgenerate

    always @(posedge clk) begin
        sel_pc <= win[PC_BITS-1:0];
        sel_depth <= ~win[KB-1:PC_BITS];
        sel_mask <= m;
    end
endmodule

`default_nettype wire
