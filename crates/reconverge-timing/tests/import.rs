//! `import_gpgpusim` on GPGPU-Sim's own configurations of the two validated presets: every parameter the
//! import maps equals the preset's, except the ones the presets fit to GPGPU-Sim's cycles or lay out
//! differently, each named here with the reason.

use reconverge_timing::import::{import_gpgpusim, Import};
use reconverge_timing::GpuConfig;

const GTX480: &str = include_str!("data/gpgpusim/SM2_GTX480.config");
const QV100: &str = include_str!("data/gpgpusim/SM7_QV100.config");

/// The keys the import set whose values differ from the preset's (`key = imported value`).
fn differences(i: &Import, preset: &GpuConfig) -> Vec<String> {
    let mapped: Vec<&str> = i.mapped.iter().flat_map(|(_, keys)| keys.split(", ")).collect();
    let imported = &i.config;
    let flat = |c: &GpuConfig| -> Vec<(String, String)> {
        let mut out = Vec::new();
        let table = toml::Table::try_from(c).expect("a table");
        for (k, v) in table {
            match v {
                toml::Value::Table(t) => {
                    out.extend(t.into_iter().map(|(k2, v2)| (format!("{k}.{k2}"), v2.to_string())))
                }
                v => out.push((k, v.to_string())),
            }
        }
        out
    };
    let (a, b) = (flat(imported), flat(preset));
    a.iter().filter(|x| !b.contains(x) && mapped.contains(&x.0.as_str())).map(|(k, v)| format!("{k} = {v}")).collect()
}

#[test]
fn gpgpusims_gtx480_file_imports_to_the_gtx480_preset_but_its_fitted_latencies() {
    let i = import_gpgpusim(GTX480, "gtx480").expect("imports");
    i.config.validate().expect("valid");
    let diff = differences(&i, &GpuConfig::gtx480());
    assert_eq!(
        diff,
        [
            // The presets fit the memory path to GPGPU-Sim's cycles: ROP 120 + interconnect 40, DRAM 100 + 80.
            "dram.latency = 100",
            // GPGPU-Sim's L1 has 64 MSHR entries (`S:64:8`); the preset keeps 32.
            "l1.mshrs = 64",
            "l2.hit_latency = 120",
            // One cache of 12 slices of 8 ways: 256 sets x 24 ways (the preset: 1024 x 6, the same lines).
            "l2.ways = 24",
        ],
        "{diff:#?}"
    );
    // DRAM timing, burst, clock and address mapping: the preset's banks exactly (no difference above).
    assert!(i.mapped.iter().any(|(o, k)| o == "-gpgpu_dram_timing_opt" && *k == "dram.banks"), "{:?}", i.mapped);
    assert!(i.mapped.iter().any(|(o, _)| o == "-gpgpu_mem_addr_mapping"));
    assert_eq!(i.config.dram.banks, GpuConfig::gtx480().dram.banks);
    assert!(i.config.l1.whole_line_fills, "-gpgpu_cache:dl1 N:...: a non-sectored L1");
    assert!(i.mapped.iter().any(|(o, k)| o == "-gpgpu_cache:dl1" && k.contains("l1.size")));
    assert_eq!(i.notes.len(), 2, "both fitted latencies are explained: {:?}", i.notes);
}

#[test]
fn gpgpusims_qv100_file_imports_to_the_volta_preset_but_its_fitted_latencies() {
    let i = import_gpgpusim(QV100, "volta").expect("imports");
    i.config.validate().expect("valid");
    let diff = differences(&i, &GpuConfig::volta());
    assert_eq!(
        diff,
        [
            // GPGPU-Sim's HBM: 32 channels x 16 bytes x 2 per clock at 850 MHz = 768 bytes per 1132 MHz cycle;
            // the preset takes the V100's 900 GB/s (795).
            "dram.bytes_per_cycle = 768",
            "dram.latency = 100",
            // GPGPU-Sim's L1 is one set of 256 ways (fully associative); the preset keeps 64 sets of 4.
            "l1.ways = 256",
            "l2.hit_latency = 160",
        ],
        "{diff:#?}"
    );
    assert!(i.notes.iter().any(|n| n.contains("superseded")), "{:?}", i.notes);
}

#[test]
fn options_comments_quotes_and_bad_values() {
    let text = "# a comment\n-gpgpu_n_clusters 4 # trailing\n-gpgpu_n_cores_per_cluster 2\n\
                -gpgpu_dram_timing_opt \"nbk=8:CCD=3:\n   CL=13\"\n-gpgpu_no_dl1\n-gpgpu_scheduler lrr\n";
    let i = import_gpgpusim(text, "mine").expect("imports");
    assert_eq!((i.config.num_sms, i.config.l1.size, i.config.name.as_str()), (8, 0, "mine"));
    assert_eq!(i.config.sm.scheduler, reconverge_timing::SchedulerPolicy::Lrr);
    assert!(i.not_modelled.is_empty(), "{:?}", i.not_modelled);
    // The quoted value across two lines; what it leaves out stays the preset's.
    let b = i.config.dram.banks.as_ref().expect("banks");
    assert_eq!((b.banks, b.ccd, b.cl, b.rcd), (8, 3, 13, 12));
    let e = import_gpgpusim("-gpgpu_dram_timing_opt \"nbk=16:CCD\"\n", "x").unwrap_err();
    assert!(e.to_string().contains("`CCD` is not NAME=NUMBER"), "{e}");
    let e = import_gpgpusim("\n-gpgpu_shader_registers lots\n", "x").unwrap_err();
    assert_eq!(e.to_string(), "line 2: -gpgpu_shader_registers lots: not a number");
    // Huge values neither overflow nor wrap into small ones: validation refuses them.
    let huge = "-gpgpu_n_clusters 4294967297\n-gpgpu_n_cores_per_cluster 999999999999\n-gpgpu_n_mem 99999999999\n\
                -gpgpu_n_sub_partition_per_mchannel 99999999999\n-gpgpu_cache:dl2 S:64:128:8,L:B:m:L:L,A:256:4,4:0,32\n\
                -gpgpu_n_mem_per_ctrlr 999999999999\n-gpgpu_dram_buswidth 999999999999\n";
    let i = import_gpgpusim(huge, "x").expect("reads");
    assert_eq!(i.config.num_sms, u32::MAX);
    assert!(i.config.validate().is_err());
    let e = import_gpgpusim("-gpgpu_scheduler warp_limiting:2\n", "x").unwrap_err();
    assert!(e.to_string().starts_with("line 1: -gpgpu_scheduler warp_limiting:2: a scheduler"), "{e}");
}
