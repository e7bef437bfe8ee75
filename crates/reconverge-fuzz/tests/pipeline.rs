//! A bounded fuzzing run in CI: mutated corpus PTX through the whole pipeline (parse, print, analyses,
//! reports, SSY pass, decode, runs under every mechanism in functional and timed mode) finds nothing.
//! Longer campaigns: `cargo run --release -p reconverge-fuzz -- --minutes N`.

use reconverge_fuzz::{check, corpus, mutate, CheckOptions};

#[test]
fn mutated_kernels_pass_through_every_stage() {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let files = corpus(&repo);
    assert!(files.len() > 60, "the corpus: kernels and test data");
    let mut rng = fastrand::Rng::with_seed(7);
    let opts = CheckOptions::default();
    let (mut parsed, mut runs) = (0, 0);
    let mut per_mechanism = vec![0u32; reconverge_mechanism::Mechanism::ALL.len()];
    let (mut warp_sizes, mut configs) = ([0u32; 7], vec![0u32; reconverge_timing::PRESETS.len() + 2]);
    let mut findings = Vec::new();
    for i in 0..150 {
        // Every file in turn (small ones twice as often).
        let (name, text) = &files[if i % 2 == 0 { i / 2 % files.len() } else { i % (files.len() / 2) }];
        let (input, muts) = mutate(text, &mut rng);
        match check(&input, &opts, i as u64) {
            Ok(r) => {
                parsed += r.parsed as u32;
                runs += r.runs;
                per_mechanism.iter_mut().zip(&r.per_mechanism).for_each(|(t, n)| *t += n);
                warp_sizes.iter_mut().zip(&r.per_warp_size).for_each(|(t, n)| *t += n);
                configs.iter_mut().zip(&r.per_config).for_each(|(t, n)| *t += n);
            }
            Err(f) => findings.push(format!("{name} {muts:?}: {} {}", f.stage, f.what)),
        }
    }
    assert!(findings.is_empty(), "{}", findings.join("\n"));
    assert!(parsed > 20 && runs > 100, "the mutations leave many inputs runnable ({parsed} parsed, {runs} runs)");
    // Every mechanism, every warp size from 1 to 64, every preset and random valid and invalid
    // configurations were exercised.
    for (m, n) in reconverge_mechanism::Mechanism::ALL.iter().zip(&per_mechanism) {
        assert!(*n > 0, "{m} never ran");
    }
    assert!(warp_sizes.iter().all(|&n| n > 0), "warp sizes 1..64: {warp_sizes:?}");
    assert!(configs.iter().all(|&n| n > 0), "presets, random valid, random invalid: {configs:?}");
}

/// Unmutated, every corpus kernel gets through every stage.
#[test]
fn the_corpus_itself_passes() {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let opts = CheckOptions { timed: false, ..CheckOptions::default() };
    for (i, (name, text)) in corpus(&repo).iter().take(40).enumerate() {
        if let Err(f) = check(text, &opts, i as u64) {
            panic!("{name}: {} {}", f.stage, f.what);
        }
    }
}
