// Context Compact Sort (CCS) unit of Simty's sorted path list (seed 003 section 3.2).
//
// Three paths a, b, c (a key and a thread mask each; an empty mask is "no path") are merged where they
// are at the same place and sorted, in one cycle, by a latency-optimised circuit rather than a sorting
// network: order and equality comparators between all pairs of inputs, then one 3-input multiplexer
// per output, driven by boolean functions of the comparator results. Outputs x < y < z (empty masks for
// missing outputs; x is valid whenever any input is).
//
// A key is {~depth, pc}: the smaller key runs first, which is seed 003's order (maximum call depth,
// then minimum pc) with one magnitude comparison.
`default_nettype none

module ccs #(
    parameter W = 4,  // threads per warp
    parameter KB = 38 // key bits: depth bits + pc bits
) (
    input  wire [KB-1:0] ka,
    input  wire [W-1:0]  ma,
    input  wire [KB-1:0] kb,
    input  wire [W-1:0]  mb,
    input  wire [KB-1:0] kc,
    input  wire [W-1:0]  mc,
    output wire [KB-1:0] kx,
    output wire [W-1:0]  mx,
    output wire [KB-1:0] ky,
    output wire [W-1:0]  my,
    output wire [KB-1:0] kz,
    output wire [W-1:0]  mz,
    // Input c ended up in output x (alone or merged): y then comes from a or b and may be behind a path
    // of the cold table, which the background sorter must check.
    output wire          c_to_x
);
    wire va = |ma;
    wire vb = |mb;
    wire vc = |mc;
    // All-pairs order and equality comparators (6 comparators).
    wire lt_ab = ka < kb;
    wire lt_ac = ka < kc;
    wire lt_bc = kb < kc;
    wire eq_ab = ka == kb;
    wire eq_ac = ka == kc;
    wire eq_bc = kb == kc;
    // Compaction: paths at the same place merge (b into a, c into a, otherwise c into b).
    wire m_ab = va & vb & eq_ab;
    wire m_ac = va & vc & eq_ac;
    wire m_bc = vb & vc & eq_bc & ~m_ab;
    wire [W-1:0] na = ma | (m_ab ? mb : {W{1'b0}}) | (m_ac ? mc : {W{1'b0}});
    wire [W-1:0] nb = m_ab ? {W{1'b0}} : (mb | (m_bc ? mc : {W{1'b0}}));
    wire [W-1:0] nc = (m_ac | m_bc) ? {W{1'b0}} : mc;
    wire wa = va;
    wire wb = vb & ~m_ab;
    wire wc = vc & ~m_ac & ~m_bc;
    // "i runs before j" among the surviving paths (no ties are left after compaction).
    wire b_a = wb & (~wa | ~lt_ab);
    wire c_a = wc & (~wa | ~lt_ac);
    wire a_b = wa & (~wb | lt_ab);
    wire c_b = wc & (~wb | ~lt_bc);
    wire a_c = wa & (~wc | lt_ac);
    wire b_c = wb & (~wc | lt_bc);
    // Rank of each path: how many surviving paths run before it.
    wire [1:0] ra = {1'b0, b_a} + {1'b0, c_a};
    wire [1:0] rb = {1'b0, a_b} + {1'b0, c_b};
    wire [1:0] rc = {1'b0, a_c} + {1'b0, b_c};
    wire xa = wa & (ra == 2'd0);
    wire xb = wb & (rb == 2'd0);
    wire xc = wc & (rc == 2'd0);
    wire ya = wa & (ra == 2'd1);
    wire yb = wb & (rb == 2'd1);
    wire yc = wc & (rc == 2'd1);
    wire za = wa & (ra == 2'd2);
    wire zb = wb & (rb == 2'd2);
    wire zc = wc & (rc == 2'd2);
    // One-hot 3-input multiplexers, one per output.
    assign kx = ({KB{xa}} & ka) | ({KB{xb}} & kb) | ({KB{xc}} & kc);
    assign mx = ({W{xa}} & na) | ({W{xb}} & nb) | ({W{xc}} & nc);
    assign ky = ({KB{ya}} & ka) | ({KB{yb}} & kb) | ({KB{yc}} & kc);
    assign my = ({W{ya}} & na) | ({W{yb}} & nb) | ({W{yc}} & nc);
    assign kz = ({KB{za}} & ka) | ({KB{zb}} & kb) | ({KB{zc}} & kc);
    assign mz = ({W{za}} & na) | ({W{zb}} & nb) | ({W{zc}} & nc);
    assign c_to_x = xc | (xa & m_ac) | (xb & m_bc);
endmodule

`default_nettype wire
