//! Tests of reading, validating and merging catalog files.

use super::*;

fn cat() -> Catalog {
    Catalog::builtin()
}

/// A minimal SYNTHETIC GPU entry for loader tests.
fn one(name: &str, cc: &str, sms: u32) -> String {
    format!(
        "[[gpu]]\nname = \"{name}\"\nvendor = \"NVIDIA\"\narch = \"A\"\ncompute_capability = \"{cc}\"\nsm_count = {sms}\nboost_clock_mhz = 1000.0\nfp32_gflops = 1000.0\nmem_bandwidth_gbs = 1.0\nl2_bytes = 1024\nregs_per_sm = 65536\nmax_threads_per_sm = 1536\nmax_blocks_per_sm = 16\nsmem_per_sm = 102400\nwarp_size = 32\n"
    )
}

#[test]
fn builtin_loads_with_enough_gpus() {
    let c = cat();
    assert!(c.gpus().len() >= 80, "only {} GPUs", c.gpus().len());
    assert!(c.compute_capabilities().len() >= 19);
}

#[test]
fn load_errors_name_file_line_and_gpu() {
    let e = Catalog::from_toml_str("[[gpu]]\nname = \"X\"\nvendor = \"NVIDIA\"\n", "bad.toml")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("bad.toml:1:1: [[gpu]] #1 'X'"), "{e}");
    assert!(e.contains("missing field"), "{e}");
    assert!(!e.contains('\n'));

    let e = Catalog::from_toml_str("# c\n[[gpu]\n", "broken.toml")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("broken.toml:2:"), "{e}");
    assert!(!e.contains('\n'), "{e}");

    // A bad field is reported at its own line and column.
    let text = format!("{}\n{}", one("A", "8.6", 1), one("Z", "8.6", 0));
    let e = Catalog::from_toml_str(&text, "z.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("z.toml:22:1: [[gpu]] #2 'Z': sm_count must be positive"),
        "{e}"
    );
    let dup = format!("{}\n{}", one("Dup", "8.6", 1), one("dup", "8.6", 2));
    let e = Catalog::from_toml_str(&dup, "d.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("d.toml:18:1:") && e.contains("already used"),
        "{e}"
    );
    let e = Catalog::from_toml_str(&one("Q", "eight", 1), "q.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("q.toml:5:1:") && e.contains("compute_capability"),
        "{e}"
    );
    // SYNTHETIC: a sustained bandwidth above the peak (1.0 GB/s in `one`).
    let e = Catalog::from_toml_str(
        &format!("{}sustained_bandwidth_gbs = 5.0\n", one("S", "8.6", 1)),
        "s.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("s.toml:16:1: [[gpu]] #1 'S': sustained_bandwidth_gbs 5 is above"),
        "{e}"
    );
    let e = Catalog::from_toml_str(&format!("{}bogus = 1\n", one("B", "8.6", 1)), "b.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("bogus"), "{e}");
    let e = Catalog::from_toml_str("foo = 1\n", "f.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown top-level key 'foo'"), "{e}");
}

/// SYNTHETIC: the limits of a made-up compute capability 13.7 (valid as written).
const CC_13_7: &str = "[[cc]]\ncc = \"13.7\"\nmax_threads_per_block = 1024\nmax_threads_per_sm = 1536\nmax_warps_per_sm = 48\nmax_blocks_per_sm = 16\nregs_per_sm = 65536\nmax_regs_per_block = 65536\nmax_regs_per_thread = 255\nreg_alloc_unit = 256\nwarp_alloc_granularity = 4\nsmem_per_sm = 102400\nmax_smem_per_block = 101376\nsmem_alloc_unit = 128\nreserved_smem_per_block = 1024\nsmem_carveout_kb = [0, 100]\n";

fn load_err(text: &str) -> String {
    Catalog::from_toml_str(text, "c.toml")
        .unwrap_err()
        .to_string()
}

#[test]
fn type_errors_point_at_the_key() {
    // `one` writes sm_count on line 6; the value's type is checked by serde, which
    // alone knows nothing of lines: each used to be reported at 1:1.
    let sms = |v: &str| one("T", "8.6", 1).replace("sm_count = 1\n", &format!("sm_count = {v}\n"));
    assert_eq!(
        load_err(&sms("\"many\"")),
        "c.toml:6:1: [[gpu]] #1 'T': invalid type: string \"many\", expected u32"
    );
    assert_eq!(
        load_err(&sms("132.5")),
        "c.toml:6:1: [[gpu]] #1 'T': invalid type: floating point `132.5`, expected u32"
    );
    assert_eq!(
        load_err(&sms("-4")),
        "c.toml:6:1: [[gpu]] #1 'T': invalid value: integer `-4`, expected u32"
    );
    // An indented key of the second entry: its own line and column.
    let text = format!(
        "{}\n{}",
        one("A", "8.6", 1),
        one("B", "8.6", 1).replace("l2_bytes = 1024\n", "  l2_bytes = -1\n")
    );
    assert_eq!(
        load_err(&text),
        "c.toml:26:3: [[gpu]] #2 'B': invalid value: integer `-1`, expected u64"
    );
    // An element inside an array is reported at the array's key.
    let text = format!("{}aliases = [\"x\", 3]\n", one("A", "8.6", 1));
    assert_eq!(
        load_err(&text),
        "c.toml:16:1: [[gpu]] #1 'A': invalid type: integer `3`, expected a string"
    );
    // An inline table: the key inside it.
    assert_eq!(
        load_err("gpu = [{name = \"I\", sm_count = 1.5}]\n"),
        "c.toml:1:21: [[gpu]] #1 'I': invalid type: floating point `1.5`, expected u32"
    );
}

#[test]
fn missing_and_unknown_fields_point_at_header_and_key() {
    // A missing field: the entry's header (after a comment, indented).
    let text = format!(
        "# mine\n\n  {}",
        one("M", "8.6", 1).replace("sm_count = 1\n", "")
    );
    assert_eq!(
        load_err(&text),
        "c.toml:3:3: [[gpu]] #1 'M': missing field `sm_count`"
    );
    let e = load_err(&format!(
        "{}\n{}warp_sise = 32\n",
        one("A", "8.6", 1),
        one("U", "8.6", 1)
    ));
    assert!(
        e.starts_with(
            "c.toml:32:1: [[gpu]] #2 'U': unknown field `warp_sise`, expected one of `name`"
        ),
        "{e}"
    );
    assert!(!e.contains('\n'), "{e}");
    assert_eq!(
        load_err("# top\n\nfoo = 1\n"),
        "c.toml:3:1: unknown top-level key 'foo' (a catalog file holds [[gpu]] and [[cc]] tables)"
    );
    assert_eq!(
        load_err("\ngpu = 3\n"),
        "c.toml:2:1: 'gpu' must be an array of tables ([[gpu]])"
    );
}

#[test]
fn cc_errors_point_at_the_key() {
    // SYNTHETIC: a negative carveout; smem_carveout_kb is line 16 of CC_13_7, line 32 here.
    let text = format!(
        "{}\n{}",
        one("F", "13.7", 1),
        CC_13_7.replace("[0, 100]", "[0, -100]")
    );
    assert_eq!(
        load_err(&text),
        "c.toml:32:1: [[cc]] #1 '13.7': invalid value: integer `-100`, expected u32"
    );
    let text = CC_13_7.replace("smem_carveout_kb = [0, 100]\n", "");
    assert_eq!(
        load_err(&text),
        "c.toml:1:1: [[cc]] #1 '13.7': missing field `smem_carveout_kb`"
    );
    let text = CC_13_7.replace("max_warps_per_sm = 48", "max_warps_per_sm = \"48\"");
    assert_eq!(
        load_err(&text),
        "c.toml:5:1: [[cc]] #1 '13.7': invalid type: string \"48\", expected u32"
    );
}

#[test]
fn name_clashes_point_at_the_name_or_alias() {
    // Within one file: the later GPU's alias, at the alias itself.
    let text = format!(
        "{}\n{}aliases = [\"b1\", \"A\"]\n",
        one("A", "8.6", 1),
        one("B", "8.6", 1)
    );
    assert_eq!(
        load_err(&text),
        "c.toml:32:18: name or alias 'A' of GPU 'B' is already used by GPU 'A'"
    );
    // Against the built-in catalog (the clash is found when merging).
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("mine.toml");
    let mut c = cat();
    std::fs::write(
        &p,
        format!(
            "# mine\n{}aliases = [\"H100 SXM5\"]\n",
            one("Fuzz", "9.0", 1)
        ),
    )
    .unwrap();
    let e = c.merge_file(&p).unwrap_err().to_string();
    assert_eq!(
        e,
        format!(
            "{}:17:12: name or alias 'H100 SXM5' of GPU 'Fuzz' already means something (it names GPU 'NVIDIA H100 SXM5 80GB'): give the GPU names of its own",
            p.display()
        )
    );
    // A known GPU laid over with the name of a GPU listed after it (the first
    // and the last built-in GPU): still the file's alias.
    let known = c.gpus()[0].name.clone();
    let later = c.gpus().last().unwrap().name.clone();
    std::fs::write(
        &p,
        format!("[[gpu]]\nname = \"{known}\"\naliases = [\"a\",\n  \"{later}\"]\n"),
    )
    .unwrap();
    let e = c.merge_file(&p).unwrap_err().to_string();
    assert_eq!(
        e,
        format!(
            "{}:4:3: name or alias '{later}' of GPU '{known}' is already used by GPU '{later}'",
            p.display()
        )
    );
    // The public merge of a catalog without text names the origin only.
    let other = Catalog::from_toml_str(
        &format!("{}aliases = [\"Tesla T4\"]\n", one("My card", "7.5", 40)),
        "mine.toml",
    )
    .unwrap();
    assert_eq!(
        c.merge(other, "mine.toml").unwrap_err().to_string(),
        "mine.toml: name or alias 'Tesla T4' of GPU 'My card' already means something (it names GPU 'NVIDIA Tesla T4'): give the GPU names of its own"
    );
}

#[test]
fn partial_entries_point_into_the_file() {
    // SYNTHETIC: partial entries over a known GPU; the laid-over fields are not
    // in the file, the entry's own are found where they are written.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("part.toml");
    let mut c = cat();
    for (text, want) in [
        (
            "[[gpu]]\nname = \"h100 sxm5\"\nmeasured_source = \"me\"\n  sm_count = \"x\"\n",
            "4:3: [[gpu]] #1 'NVIDIA H100 SXM5 80GB': invalid type: string \"x\", expected u32",
        ),
        (
            "[[gpu]]\nname = \"h100 sxm5\"\nmem_bandwidth_gbs = -5.0\n",
            "3:1: [[gpu]] #1 'NVIDIA H100 SXM5 80GB': mem_bandwidth_gbs must be a positive number, got -5",
        ),
        (
            "\n[[gpu]]\nname = \"h100 sxm5\"\nwarp_size = 48\n",
            "2:1: [[gpu]] #1 'NVIDIA H100 SXM5 80GB': max_threads_per_sm 2048 is not a multiple of warp_size 48",
        ),
    ] {
        std::fs::write(&p, text).unwrap();
        let e = c.merge_file(&p).unwrap_err().to_string();
        assert_eq!(e, format!("{}:{want}", p.display()));
    }
    // A valid partial entry still merges over the known GPU.
    std::fs::write(
        &p,
        "[[gpu]]\nname = \"h100 sxm5\"\nsustained_bandwidth_gbs = 3000.0\n",
    )
    .unwrap();
    c.merge_file(&p).unwrap();
    let g = c.resolve("H100 SXM5").unwrap();
    assert_eq!((g.sustained_bandwidth_gbs, g.sm_count), (Some(3000.0), 132));
}

#[test]
fn unknown_compute_capability_is_a_load_error() {
    // SYNTHETIC: a GPU of a compute capability no table lists.
    let e = Catalog::from_toml_str(&one("Future", "13.7", 1), "future.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("future.toml:5:1: GPU 'Future': compute capability '13.7' is not in"),
        "{e}"
    );
    assert!(e.contains("12.0") && !e.contains('\n'), "{e}");
    // The same file with the capability's limits loads.
    let c = Catalog::from_toml_str(
        &format!("{}\n{CC_13_7}", one("Future", "13.7", 1)),
        "f.toml",
    )
    .unwrap();
    let g = c.resolve("Future").unwrap();
    assert_eq!(c.limits(g).unwrap().max_blocks_per_sm, 16);
}

#[test]
fn user_file_merges_replaces_and_adds() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("mine.toml");
    // SYNTHETIC measured figure laid over a known GPU, and a new GPU.
    std::fs::write(
        &p,
        format!(
            "[[gpu]]\nname = \"NVIDIA GeForce RTX 4070\"\nsustained_bandwidth_gbs = 450.0\nmeasured_source = \"my bench\"\n\n{}aliases = [\"FG-1\"]\n",
            one("Future GPU", "12.0", 10)
        ),
    )
    .unwrap();
    let mut c = cat();
    let n = c.gpus().len();
    c.merge_file(&p).unwrap();
    assert_eq!(c.gpus().len(), n + 1);
    let g = c.resolve("rtx 4070").unwrap();
    assert_eq!(g.sustained_bandwidth_gbs, Some(450.0));
    assert_eq!(g.sm_count, 46, "the known fields stay");
    let f = c.resolve("fg 1").unwrap().clone();
    assert_eq!(f.sm_count, 10);
    let l = c.limits(&f).unwrap();
    assert_eq!(l.max_blocks_per_sm, 16, "the GPU's own field wins");
    assert_eq!(l.smem_alloc_unit, 128);

    // A user GPU of an unknown capability is refused, naming file, line and GPU.
    let q = dir.path().join("new.toml");
    std::fs::write(&q, format!("# mine\n{}", one("Odd", "13.7", 4))).unwrap();
    let e = c.merge_file(&q).unwrap_err().to_string();
    assert!(
        e.contains("new.toml:6:1: GPU 'Odd'") && e.contains("13.7"),
        "{e}"
    );
    assert_eq!(c.gpus().len(), n + 1, "a failed merge changes nothing");
}

/// An alias that resolves as a known GPU's name does ("RTX 4090" for the GeForce
/// RTX 4090) is a clash, not a new meaning for the name.
#[test]
fn merge_rejects_an_alias_that_resolves_as_another_gpus_name() {
    let mut c = Catalog::builtin();
    let other = Catalog::from_toml_str(
        &format!("{}aliases = [\"RTX 4090\"]\n", one("My GPU X", "8.9", 40)),
        "mine.toml",
    )
    .unwrap();
    let e = c.merge(other, "mine.toml").unwrap_err().to_string();
    assert!(
        e.contains("name or alias 'RTX 4090' of GPU 'My GPU X' already means something (it names GPU 'NVIDIA GeForce RTX 4090')"),
        "{e}"
    );
    assert_eq!(
        c.resolve("RTX 4090").unwrap().name,
        "NVIDIA GeForce RTX 4090"
    );
    // a spelling that matches several GPUs, or only brand words, is taken too
    for (alias, why) in [
        (
            "A100",
            "it is ambiguous: it matches 'NVIDIA A100 PCIe 40GB'",
        ),
        ("rtx", "it is only brand words"),
    ] {
        let other = Catalog::from_toml_str(
            &format!("{}aliases = [\"{alias}\"]\n", one("My GPU X", "8.9", 40)),
            "mine.toml",
        )
        .unwrap();
        let e = c.merge(other, "mine.toml").unwrap_err().to_string();
        let said =
            format!("name or alias '{alias}' of GPU 'My GPU X' already means something ({why}");
        assert!(e.contains(&said), "{e}");
    }
    assert!(c.resolve("A100").is_none());
}

#[test]
fn merge_rejects_alias_clash() {
    let mut c = cat();
    let other = Catalog::from_toml_str(
        &format!("{}aliases = [\"Tesla T4\"]\n", one("My card", "7.5", 40)),
        "mine.toml",
    )
    .unwrap();
    let n = c.gpus().len();
    let e = c.merge(other, "mine.toml").unwrap_err().to_string();
    assert_eq!(
        c.gpus().len(),
        n,
        "a failed merge leaves the catalog unchanged"
    );
    assert!(
        e.contains("mine.toml") && e.contains("Tesla T4") && e.contains("My card"),
        "{e}"
    );
}

/// A file's entry that replaces a known GPU keeps its vendor and architecture, and
/// each replacement is returned as a note naming the fields it changes.
#[test]
fn replacing_a_known_gpu_keeps_its_vendor_and_arch_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("c.toml");
    let mut c = cat();
    std::fs::write(&p, "[[gpu]]\nname = \"RTX 3090\"\nvendor = \"AMD\"\n").unwrap();
    let e = c.merge_file(&p).unwrap_err().to_string();
    assert_eq!(
        e,
        format!(
            "{}:3:1: GPU 'NVIDIA GeForce RTX 3090' is known (vendor \"NVIDIA\", arch \"Ampere\"); an entry replacing it must keep its vendor \"NVIDIA\", not \"AMD\": give a different GPU a name of its own",
            p.display()
        )
    );
    std::fs::write(
        &p,
        "[[gpu]]\nname = \"RTX 3090\"\narch = \"Ampere GA102\"\n",
    )
    .unwrap();
    let e = c.merge_file(&p).unwrap_err().to_string();
    assert!(
        e.contains(":3:1: GPU 'NVIDIA GeForce RTX 3090' is known")
            && e.contains("its arch \"Ampere\", not \"Ampere GA102\""),
        "{e}"
    );
    // the same vendor in another case is the same vendor
    std::fs::write(
        &p,
        "[[gpu]]\nname = \"RTX 3090\"\nvendor = \"nvidia\"\nmem_bandwidth_gbs = 900.0\n",
    )
    .unwrap();
    let notes = c.merge_file(&p).unwrap();
    assert_eq!(
        notes,
        [format!(
            "{} replaces the entry of GPU 'NVIDIA GeForce RTX 3090' (mem_bandwidth_gbs, vendor)",
            p.display()
        )]
    );
    assert_eq!(c.resolve("RTX 3090").unwrap().mem_bandwidth_gbs, 900.0);
    // a new GPU replaces nothing
    std::fs::write(&p, one("Fuzz 1", "8.6", 1)).unwrap();
    assert!(c.merge_file(&p).unwrap().is_empty());
}

/// A name or alias with a character outside ASCII (after NFKC or not) is refused
/// where the file writes it, naming the character and the GPU it looks like; it
/// would otherwise lose that letter wherever names are matched and be another GPU.
#[test]
fn entry_names_with_look_alike_characters_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("c.toml");
    let mut c = cat();
    let entry = one("NVIDIA GeForce RTX 3090 \u{0422}i", "8.6", 1);
    std::fs::write(&p, &entry).unwrap();
    let e = c.merge_file(&p).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!("{}:2:1: [[gpu]] #1: name 'NVIDIA GeForce RTX 3090 \u{0422}i': '\u{0422}' (U+0422 CYRILLIC CAPITAL LETTER TE", p.display()))
            && e.contains("it is GPU 'NVIDIA GeForce RTX 3090 Ti'"),
        "{e}"
    );
    assert_eq!(
        c.resolve("RTX 3090").unwrap().sm_count,
        82,
        "the RTX 3090 is untouched"
    );
    let entry = format!(
        "{}aliases = [\"ok\", \"Fuzz\u{200D}1\"]\n",
        one("Fuzz 1", "8.6", 1)
    );
    std::fs::write(&p, &entry).unwrap();
    let e = c.merge_file(&p).unwrap_err().to_string();
    assert!(
        e.contains("alias 'Fuzz\u{200D}1': an invisible character (U+200D ZERO WIDTH JOINER)"),
        "{e}"
    );
    // full-width letters: ASCII once normalised, but a catalog writes its names in ASCII
    std::fs::write(&p, one("\u{FF26}uzz 1", "8.6", 1)).unwrap();
    let e = c.merge_file(&p).unwrap_err().to_string();
    assert!(e.contains("U+FF26"), "{e}");
    // the built-in catalog's own check, without a catalog to compare with
    let e = Catalog::from_toml_str(&one("Fuzz \u{0405}", "8.6", 1), "t.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("t.toml:2:1: [[gpu]] #1 'Fuzz \u{0405}': name 'Fuzz \u{0405}' holds '\u{0405}' (U+0405 CYRILLIC CAPITAL LETTER DZE") && e.contains("(write 'Fuzz S')"), "{e}");
}
