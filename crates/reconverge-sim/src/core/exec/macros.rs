//! The lane-wise computation macros of the instruction families: one, two or three sources fetched as lane
//! slices, the result computed into the scratch array and written back (or computed in place in the
//! register file when `direct1`/`direct2` can).

// The whole-warp arithmetic of the ALU families: `un!`, `bin!`, `ter!` apply `f` to the lanes `eff` of
// group `g` (straight into the destination row when `direct` says a whole warp issues) and write `d`;
// the first argument names the caller's context variables.
macro_rules! un {
    (($env:ident, $sc:ident, $cta:ident, $g:ident, $eff:ident, $w:ident, $direct:ident, $only:ident), $d:expr, $a:expr, $f:expr) => {{
        let f = $f;
        if let Some(base) = $direct {
            if direct1($cta, base, $d, $a, &f) {
                return Ok(Effects::next());
            }
        }
        let a = fetch($cta, $env, $g, $a, &mut $sc.a, $only);
        map1($w, $only, a, &mut $sc.out, &f);
        write_reg($cta, $env, $g, $d, $eff, &$sc.out, $only.is_some());
    }};
}

macro_rules! bin {
    (($env:ident, $sc:ident, $cta:ident, $g:ident, $eff:ident, $w:ident, $direct:ident, $only:ident), $d:expr, $a:expr, $b:expr, $f:expr) => {{
        let f = $f;
        if let Some(base) = $direct {
            if direct2($cta, base, $d, $a, $b, &f) {
                return Ok(Effects::next());
            }
        }
        let a = fetch($cta, $env, $g, $a, &mut $sc.a, $only);
        let b = fetch($cta, $env, $g, $b, &mut $sc.b, $only);
        map2($w, $only, a, b, &mut $sc.out, &f);
        write_reg($cta, $env, $g, $d, $eff, &$sc.out, $only.is_some());
    }};
}

macro_rules! ter {
    (($env:ident, $sc:ident, $cta:ident, $g:ident, $eff:ident, $w:ident, $direct:ident, $only:ident), $d:expr, $a:expr, $b:expr, $c:expr, $f:expr) => {{
        let a = fetch($cta, $env, $g, $a, &mut $sc.a, $only);
        let b = fetch($cta, $env, $g, $b, &mut $sc.b, $only);
        let c = fetch($cta, $env, $g, $c, &mut $sc.c, $only);
        map3($w, $only, (a, b, c), &mut $sc.out, $f);
        write_reg($cta, $env, $g, $d, $eff, &$sc.out, $only.is_some());
    }};
}
