// Simty's sorted path list (seed 003 section 3.2): two hot context tables (HCT x, the executing path,
// and HCT y, the next one), the compact-sort unit (ccs.v) and the cold context table (CCT) with its
// background sorter. docs/hardware.md describes the design and every choice the seed leaves open.
//
// Per warp the unit keeps the invariant x < y <= every CCT path (keys {~depth, pc}), so x is always the
// path the seed's order runs next:
// - step: the branch unit gives the successor paths a and b of the issued path x; the CCS sorts and
//   merges them with c = y into x < y < z; x and y are written back to the HCTs; z is pushed on the CCT;
//   if only x is valid, y is popped from the CCT head (a synchronous RAM read, written to HCT y on the
//   next cycle). With step_keep_x the CCS takes x itself as input a (a third successor path, or more,
//   enters this way on the following cycles).
// - a step after which y may be behind a CCT path (y came from the CCT, or the old y moved to x) marks
//   the warp dirty; the warp is not ready (q_ready low) until the background sorter has compared every
//   CCT path of the warp with y, swapping them on the next cycle when out of order, and then merged y
//   into x if they are at the same place. The sorter is one state machine shared by all warps (a warp
//   counter), uses the CCT port only when the step does not, and cancels a swap that meets an insertion
//   or extraction (it reads the entry again).
//
// Contract: step_en and step_keep_x only for a warp whose q_ready is set (the warp scheduler's job);
// init_en for a warp that is not stepped in the same cycle. W and NWARPS are powers of two.
`default_nettype none

module sorted_list #(
    parameter W = 4,            // threads per warp (2..64, a power of two)
    parameter NWARPS = 8,       // warps (a power of two)
    parameter PC_BITS = 30,     // pc width
    parameter DEPTH_BITS = 8,   // call-depth width
    parameter WB = (NWARPS > 1) ? $clog2(NWARPS) : 1  // derived: warp-number bits (do not override)
) (
    input  wire                  clk,
    input  wire                  rst,
    // A warp starts: its threads init_mask at init_pc, call depth 0.
    input  wire                  init_en,
    input  wire [WB-1:0]         init_warp,
    input  wire [PC_BITS-1:0]    init_pc,
    input  wire [W-1:0]          init_mask,
    // The branch unit's successor paths of the issued path x of step_warp (an empty mask: no path).
    input  wire                  step_en,
    input  wire [WB-1:0]         step_warp,
    input  wire                  step_keep_x,
    input  wire [PC_BITS-1:0]    a_pc,
    input  wire [DEPTH_BITS-1:0] a_depth,
    input  wire [W-1:0]          a_mask,
    input  wire [PC_BITS-1:0]    b_pc,
    input  wire [DEPTH_BITS-1:0] b_depth,
    input  wire [W-1:0]          b_mask,
    // Query: the path a warp runs next (HCT x) and whether it may be stepped.
    input  wire [WB-1:0]         q_warp,
    output wire                  q_ready,
    output wire [PC_BITS-1:0]    q_pc,
    output wire [DEPTH_BITS-1:0] q_depth,
    output wire [W-1:0]          q_mask,
    // Events, for the test bench's statistics.
    output wire                  ev_swap,
    output wire                  ev_cancel
);
    localparam KB = PC_BITS + DEPTH_BITS;   // key {~depth, pc}
    localparam PB = KB + W;                 // a CCT entry {key, mask}
    localparam IB = (W > 1) ? $clog2(W) : 1;
    localparam CB = $clog2(W + 1);
    localparam AB = WB + IB;
    localparam S_LOOK = 2'd0, S_SCAN = 2'd1, S_MERGE = 2'd2;

    // Hot context tables, one entry per warp (flip-flops).
    reg [NWARPS*KB-1:0] hx_k;
    reg [NWARPS*W-1:0]  hx_m;
    reg [NWARPS*KB-1:0] hy_k;
    reg [NWARPS*W-1:0]  hy_m;
    // Cold context table: W entries per warp, a stack per warp (RAM, one read and one write port).
    reg [PB-1:0] cct [0:NWARPS*W-1];
    reg [PB-1:0] cct_q;
    reg [NWARPS*CB-1:0] cnt;
    reg [NWARPS-1:0] dirty;
    // An extraction whose data (cct_q) goes to HCT y of pop_warp this cycle.
    reg          pending;
    reg [WB-1:0] pop_warp;
    // Background sorter.
    reg [1:0]    so_state;
    reg [WB-1:0] sw;
    reg [CB-1:0] k;
    reg [CB-1:0] k_rd;
    reg          rd_valid;

    // ---- step: the compact-sort unit on the stepped warp
    // Table reads: NWARPS:1 multiplexers for the stepped warp, the sorter's warp and the query.
    reg [KB-1:0] sx_k, sy_k, so_xk, so_yk, q_k;
    reg [W-1:0]  sx_m, sy_m, so_xm, so_ym, q_m;
    reg [CB-1:0] s_cnt, so_cnt;
    reg          so_dirty, q_dirty;
    integer g;
    always @* begin
        {sx_k, sy_k, so_xk, so_yk, q_k} = {5*KB{1'b0}};
        {sx_m, sy_m, so_xm, so_ym, q_m} = {5*W{1'b0}};
        {s_cnt, so_cnt} = {2*CB{1'b0}};
        {so_dirty, q_dirty} = 2'b00;
        for (g = 0; g < NWARPS; g = g + 1) begin
            if (step_warp == g) begin
                sx_k = hx_k[g*KB +: KB];
                sx_m = hx_m[g*W +: W];
                sy_k = hy_k[g*KB +: KB];
                sy_m = hy_m[g*W +: W];
                s_cnt = cnt[g*CB +: CB];
            end
            if (sw == g) begin
                so_xk = hx_k[g*KB +: KB];
                so_xm = hx_m[g*W +: W];
                so_yk = hy_k[g*KB +: KB];
                so_ym = hy_m[g*W +: W];
                so_cnt = cnt[g*CB +: CB];
                so_dirty = dirty[g];
            end
            if (q_warp == g) begin
                q_k = hx_k[g*KB +: KB];
                q_m = hx_m[g*W +: W];
                q_dirty = dirty[g];
            end
        end
    end
    wire [KB-1:0] in_ka = step_keep_x ? sx_k : {~a_depth, a_pc};
    wire [W-1:0]  in_ma = step_keep_x ? sx_m : a_mask;
    wire [KB-1:0] ox_k, oy_k, oz_k;
    wire [W-1:0]  ox_m, oy_m, oz_m;
    wire          c_to_x;
    ccs #(.W(W), .KB(KB)) u_ccs (
        .ka(in_ka), .ma(in_ma), .kb({~b_depth, b_pc}), .mb(b_mask), .kc(sy_k), .mc(sy_m),
        .kx(ox_k), .mx(ox_m), .ky(oy_k), .my(oy_m), .kz(oz_k), .mz(oz_m), .c_to_x(c_to_x)
    );
    wire s_ins = step_en & (|oz_m);
    wire s_pop = step_en & ~(|oy_m) & (|ox_m) & (s_cnt != {CB{1'b0}});
    wire [CB-1:0] s_cnt_next = s_cnt + {{(CB-1){1'b0}}, s_ins} - {{(CB-1){1'b0}}, s_pop};
    wire s_dirty = s_pop | (c_to_x & (|oy_m) & (s_cnt_next != {CB{1'b0}}));
    wire port_busy = s_ins | s_pop;

    // ---- background sorter on warp sw
    wire [CB-1:0] so_cnt_m1 = so_cnt - {{(CB-1){1'b0}}, 1'b1};
    wire          so_pend = pending & (pop_warp == sw);
    wire [KB-1:0] e_k = cct_q[PB-1:W];
    wire [W-1:0]  e_m = cct_q[W-1:0];
    wire          so_less = e_k < so_yk;                 // the sorter's order comparator
    wire          so_merge = (|so_ym) & (so_xk == so_yk); // y at x's place: merge
    wire          so_swap = (so_state == S_SCAN) & ~port_busy & rd_valid & so_less;
    wire          so_read = (so_state == S_SCAN) & ~port_busy & (k < so_cnt);
    wire          so_pop = (so_state == S_MERGE) & ~port_busy & so_merge & (so_cnt != {CB{1'b0}});
    // The sorter's effects on warp sw's tables.
    wire          so_fold = (so_state == S_MERGE) & so_merge & ((so_cnt == {CB{1'b0}}) | so_pop);
    wire          so_clean = (so_state == S_MERGE) & (~so_merge | (so_cnt == {CB{1'b0}}));
    assign ev_swap = so_swap;
    assign ev_cancel = (so_state == S_SCAN) & port_busy & rd_valid & so_less;

    // ---- the CCT port
    reg          cct_we, cct_re;
    reg [AB-1:0] cct_wa, cct_ra;
    reg [PB-1:0] cct_wd;
    wire [CB-1:0] s_cnt_m1 = s_cnt - {{(CB-1){1'b0}}, 1'b1};
    always @* begin
        cct_we = 1'b0;
        cct_re = 1'b0;
        cct_wa = {AB{1'b0}};
        cct_ra = {AB{1'b0}};
        cct_wd = {PB{1'b0}};
        if (s_ins) begin
            cct_we = 1'b1;
            cct_wa = {step_warp, s_cnt[IB-1:0]};
            cct_wd = {oz_k, oz_m};
        end else if (so_swap) begin
            cct_we = 1'b1;
            cct_wa = {sw, k_rd[IB-1:0]};
            cct_wd = {so_yk, so_ym};
        end
        if (s_pop) begin
            cct_re = 1'b1;
            cct_ra = {step_warp, s_cnt_m1[IB-1:0]};
        end else if (so_read) begin
            cct_re = 1'b1;
            cct_ra = {sw, k[IB-1:0]};
        end else if (so_pop) begin
            cct_re = 1'b1;
            cct_ra = {sw, so_cnt_m1[IB-1:0]};
        end
    end
    always @(posedge clk) begin
        if (cct_we)
            cct[cct_wa] <= cct_wd;
        if (cct_re)
            cct_q <= cct[cct_ra];
    end

    // ---- per-warp tables, three write ports:
    //  S: a warp starts or steps (its HCT x and y, its CCT count, its dirty flag);
    //  E: CCT data to HCT y (an extraction arriving, or the sorter's swap);
    //  F: the sorter folds y into x, extracts, or finds the warp clean.
    wire [WB-1:0] ps_warp = init_en ? init_warp : step_warp;
    wire          ps_en = init_en | step_en;
    wire [KB-1:0] ps_xk = init_en ? {{DEPTH_BITS{1'b1}}, init_pc} : ox_k;
    wire [W-1:0]  ps_xm = init_en ? init_mask : ox_m;
    wire [W-1:0]  ps_ym = init_en ? {W{1'b0}} : oy_m;
    wire [CB-1:0] ps_cnt = init_en ? {CB{1'b0}} : s_cnt_next;
    wire          ps_dirty = ~init_en & s_dirty;
    wire [WB-1:0] pe_warp = pending ? pop_warp : sw;
    wire          pe_en = pending | so_swap;
    genvar gw;
    generate
        for (gw = 0; gw < NWARPS; gw = gw + 1) begin : warp
            wire s_here = ps_en & (ps_warp == gw);
            wire e_here = pe_en & (pe_warp == gw);
            wire f_here = sw == gw;
            always @(posedge clk) begin
                if (s_here)
                    hx_k[gw*KB +: KB] <= ps_xk;
                if (s_here)
                    hy_k[gw*KB +: KB] <= oy_k;
                else if (e_here)
                    hy_k[gw*KB +: KB] <= e_k;
                if (rst) begin
                    hx_m[gw*W +: W] <= {W{1'b0}};
                    hy_m[gw*W +: W] <= {W{1'b0}};
                    cnt[gw*CB +: CB] <= {CB{1'b0}};
                    dirty[gw] <= 1'b0;
                end else if (s_here) begin
                    hx_m[gw*W +: W] <= ps_xm;
                    hy_m[gw*W +: W] <= ps_ym;
                    cnt[gw*CB +: CB] <= ps_cnt;
                    dirty[gw] <= ps_dirty;
                end else begin
                    if (e_here)
                        hy_m[gw*W +: W] <= e_m;
                    if (f_here & so_fold) begin
                        hx_m[gw*W +: W] <= so_xm | so_ym;
                        hy_m[gw*W +: W] <= {W{1'b0}};
                    end
                    if (f_here & so_pop)
                        cnt[gw*CB +: CB] <= so_cnt_m1;
                    if (f_here & so_clean)
                        dirty[gw] <= 1'b0;
                end
            end
        end
    endgenerate

    // ---- the sorter's state machine and the extraction in flight
    always @(posedge clk) begin
        if (rst) begin
            pending <= 1'b0;
            pop_warp <= {WB{1'b0}};
            so_state <= S_LOOK;
            sw <= {WB{1'b0}};
            k <= {CB{1'b0}};
            k_rd <= {CB{1'b0}};
            rd_valid <= 1'b0;
        end else begin
            pending <= s_pop | so_pop;
            if (s_pop)
                pop_warp <= step_warp;
            else if (so_pop)
                pop_warp <= sw;
            case (so_state)
                S_LOOK: begin
                    if (so_dirty & ~so_pend) begin
                        so_state <= S_SCAN;
                        k <= {CB{1'b0}};
                        rd_valid <= 1'b0;
                    end else begin
                        sw <= sw + {{(WB-1){1'b0}}, 1'b1};
                    end
                end
                S_SCAN: begin
                    if (port_busy) begin
                        // The port is taken: a swap in flight is cancelled, its entry read again.
                        if (rd_valid)
                            k <= k_rd;
                        rd_valid <= 1'b0;
                    end else if (so_read) begin
                        rd_valid <= 1'b1;
                        k_rd <= k;
                        k <= k + {{(CB-1){1'b0}}, 1'b1};
                    end else begin
                        rd_valid <= 1'b0;
                        if (~rd_valid)
                            so_state <= S_MERGE;
                    end
                end
                default: begin // S_MERGE: y merges into x at the same place (then the next y is extracted)
                    if (so_clean) begin
                        so_state <= S_LOOK;
                        sw <= sw + {{(WB-1){1'b0}}, 1'b1};
                    end else if (so_pop) begin
                        so_state <= S_LOOK;
                    end
                end
            endcase
        end
    end

    assign q_ready = ~q_dirty & ~(pending & (pop_warp == q_warp));
    assign q_pc = q_k[PC_BITS-1:0];
    assign q_depth = ~q_k[KB-1:PC_BITS];
    assign q_mask = q_m;
endmodule

`default_nettype wire
