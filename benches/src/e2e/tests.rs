//! The end-to-end results' parsing and their part of the report, on small hand-made files.

use super::instr::{RMCP_CODEC_LTO, codec_for};
use super::*;

const SAMPLE: &str = "#\tserver on core 0, wrk on core 1\t6s per run\n\
    mrtr\t1\t4000\t2000\t240\t400\thosted\n\
    rmcp-codec\t1\t4100\t2050\t235\t380\tcodec\n\
    mrtr\t8\t9000\t4500\t800\t1900\thosted\n\
    rmcp-codec\t8\t10000\t5000\t700\t1500\tcodec\n\
    broken line\n";

#[test]
fn instruction_counts_compare_without_portable_sha256() {
    let text = format!(
        "{SAMPLE}#instr\tcallgrind, 10 round trips\n\
         instr\tmrtr\t10\t6300000\t70000\thosted\n\
         instr\trmcp-codec\t10\t6400000\t700000\tcodec\n\
         instr\tbroken\tten\t1\t1\tx\n"
    );
    let e = E2e::parse(&text);
    assert_eq!(e.instr.len(), 2);
    assert_eq!(e.instr("mrtr").map(Instr::per_round_trip), Some(623_000.0));
    assert_eq!(
        e.instr("rmcp-codec").map(Instr::per_round_trip),
        Some(570_000.0)
    );
    let (_, measured) = e.instr_row().unwrap();
    assert!(measured.contains("1.093×"), "{measured}");
    let mut o = String::new();
    e.section(&mut o);
    assert!(o.contains("callgrind, 10 round trips"), "{o}");
    assert!(E2e::parse(SAMPLE).instr_row().is_none());
}

#[test]
fn lto_servers_are_compared_with_the_codec_built_the_same_way() {
    let text = format!(
        "{SAMPLE}#instr\tcallgrind, 10 round trips\n\
         instr\tmrtr\t10\t5300000\t70000\thosted\n\
         instr\tmrtr-bare\t10\t5150000\t70000\tbare\n\
         instr\trmcp-codec\t10\t5700000\t700000\tcodec\n\
         instr\tmrtr-lto\t10\t4900000\t70000\thosted lto\n\
         instr\tmrtr-bare-lto\t10\t4700000\t70000\tbare lto\n\
         instr\trmcp-codec-lto\t10\t5300000\t700000\tcodec lto\n\
         cache\tmrtr-lto\t10\t150000\t100000\t50\t90000\n\
         cache\trmcp-codec\t10\t100000\t80000\t40\t90000\n\
         cache\trmcp-codec-lto\t10\t120000\t80000\t40\t90000\n"
    );
    let e = E2e::parse(&text);
    assert_eq!(codec_for("mrtr-lto"), RMCP_CODEC_LTO);
    assert_eq!(codec_for("mrtr"), RMCP_CODEC);
    let note = e.lto_note().unwrap();
    // Without portable SHA: 523,000 / 500,000 without LTO, 483,000 / 460,000 with it.
    assert!(
        note.contains("from 500000 to 460000 instructions per round trip (-8.0 %)"),
        "{note}"
    );
    assert!(
        note.contains(
            "hosted server's ratio is 1.046× without it and 1.050× with it: the same within"
        ),
        "{note}"
    );
    // 508,000 / 500,000 = 1.016 against 463,000 / 460,000 = 1.0065.
    assert!(
        note.contains(
            "mrtr-alone server's ratio is 1.016× without it and 1.007× with it: narrower"
        ),
        "{note}"
    );
    let mut o = String::new();
    e.section(&mut o);
    assert!(
        o.contains("| hosted lto | 490000 | 7000 | 483000 | 1.050× |"),
        "{o}"
    );
    // I1 misses against the LTO codec's 12,000, not the plain codec's 10,000.
    assert!(o.contains("| hosted lto | 15000 (1.25×) |"), "{o}");
    assert!(E2e::parse(SAMPLE).lto_note().is_none());
}

#[test]
fn the_token_length_bound_on_the_gap_is_reported() {
    let text = format!(
        "{SAMPLE}#instr\tcallgrind, 10 round trips\n\
         instr\tmrtr\t10\t5300000\t70000\thosted\n\
         instr\tmrtr-bare\t10\t5150000\t70000\tbare\n\
         instr\trmcp-codec\t10\t5600000\t700000\tcodec\n\
         instr\trmcp-codec-long\t10\t5700000\t740000\tlong\n"
    );
    let e = E2e::parse(&text);
    // codec 490,000; long 496,000 (+6,000); hosted 523,000 (+33,000); bare 508,000
    // (+18,000).
    let split = e.token_length_split().unwrap();
    assert!(
        split.contains("6000 instructions per round trip more"),
        "{split}"
    );
    // The long-token server's extra count also holds the codec's own work on the filler,
    // so it only bounds the token's share.
    assert!(split.contains("That is an upper bound"), "{split}");
    assert!(
        split.contains(
            "hosted server's 33000 more than the codec's, the token's length explains at \
             most 18 %; at least the other 27000"
        ),
        "{split}"
    );
    assert!(
        split.contains(
            "mrtr-alone server's 18000 more than the codec's, the token's length explains \
             at most 33 %; at least the other 12000"
        ),
        "{split}"
    );
    // The drift it quotes is the codec count's 0.2 %.
    assert!(
        split.contains("a 0.2 % move between runs is about 980 instructions"),
        "{split}"
    );
    let mut o = String::new();
    e.section(&mut o);
    assert!(o.contains("**Token length.**"), "{o}");
    // Without the long-token count there is no split.
    assert!(E2e::parse(SAMPLE).token_length_split().is_none());
}

#[test]
fn parses_runs_and_judges_each_connection_count() {
    let e = E2e::parse(SAMPLE);
    assert_eq!(e.runs.len(), 4);
    assert_eq!(e.conns(), vec![1, 8]);
    let goals = e.goals();
    assert_eq!(goals.len(), 2);
    // 2000/2050 = 0.976 and 240/235 = 1.02: within 5 %.
    assert_eq!(goals[0].2, Some(true), "{}", goals[0].1);
    // 4500/5000 = 0.9: not within 5 %.
    assert_eq!(goals[1].2, Some(false), "{}", goals[1].1);
}

#[test]
fn paired_repetitions_and_cache_counts_are_reported() {
    let text = format!(
        "{SAMPLE}pair\tmrtr\t8\t1\t0.8800\t1.1000\n\
         pair\tmrtr\t8\t2\t0.9300\t1.0500\n\
         pair\tmrtr\t8\t3\t0.9000\t1.0800\n\
         pair\tmrtr\t8\tbroken\n\
         #instr\tcallgrind, 10 round trips\n\
         instr\tmrtr\t10\t6300000\t70000\thosted\n\
         instr\trmcp-codec\t10\t6400000\t700000\tcodec\n\
         cache\tmrtr\t10\t150000\t100000\t50\t90000\n\
         cache\trmcp-codec\t10\t120000\t80000\t40\t90000\n\
         steal\twrk\tmrtr\t8\t1\t60\t1200\t120\n\
         steal\twrk\tmrtr\t8\t2\t0\t1200\t12\n\
         steal\twrk\tmrtr\t8\t3\t6\t1200\t24\n"
    );
    let e = E2e::parse(&text);
    assert_eq!(e.pairs.len(), 3);
    assert_eq!(e.steal.len(), 3);
    let ((t, tlo, thi), (p, _, _)) = e.paired("mrtr", 8).unwrap();
    assert_eq!((t, tlo, thi), (0.90, 0.88, 0.93));
    assert_eq!(p, 1.08);
    assert!(e.paired("mrtr", 1).is_none());
    let goals = e.goals();
    assert!(goals[1].1.contains("0.88–0.93×"), "{}", goals[1].1);
    // Steal 5 %, 0 % and 0.5 % of the three runs at 8 connections; other processes 10 %,
    // 1 % and 2 %.
    assert!(
        goals[1]
            .1
            .ends_with("; during the runs steal 0.5 % (5.0), other processes 2.0 % (10.0)"),
        "{}",
        goals[1].1
    );
    assert!(!goals[0].1.contains("steal"), "{}", goals[0].1);
    let mut o = String::new();
    e.section(&mut o);
    assert!(
        o.contains("| hosted | 8 | 0.90× (0.88–0.93) | 1.08× (1.05–1.10) | steal 0.5 % (5.0), other processes 2.0 % (10.0) |"),
        "{o}"
    );
    assert!(
        o.contains("a median 0.5 % (largest 5.0 %) of this machine's CPU time"),
        "{o}"
    );
    assert!(o.contains("Above 5 % a run competed"), "{o}");
    // 15,000 against 12,000 I1 misses per round trip.
    assert!(
        o.contains("| hosted | 15000 (1.25×) | 10000 (1.25×) | 5 (1.25×) | 9000 (1.00×) |"),
        "{o}"
    );
}

#[test]
fn the_bare_series_is_reported_but_the_goal_is_the_hosted_servers() {
    let text = format!(
        "{SAMPLE}mrtr-bare\t8\t9800\t4900\t710\t1500\tbare\n\
         pair\tmrtr\t8\t1\t0.9000\t1.1400\n\
         pair\tmrtr-bare\t8\t1\t0.9800\t1.0100\n"
    );
    let e = E2e::parse(&text);
    // The bare server is within 5 % (4900/5000), the hosted one is not: the goal follows
    // the hosted server.
    let goals = e.goals();
    assert_eq!(goals[1].2, Some(false), "{}", goals[1].1);
    assert!(goals[1].1.starts_with("4500 vs 5000"), "{}", goals[1].1);
    let mut o = String::new();
    e.section(&mut o);
    assert!(
        o.contains("| bare | 8 | 4900 | 0.98× | 710 | 1500 |"),
        "{o}"
    );
    assert!(
        o.contains("| bare | 8 | 0.98× (0.98–0.98) | 1.01× (1.01–1.01) | – |"),
        "{o}"
    );
}

#[test]
fn spread_takes_the_middle_of_an_even_count() {
    assert_eq!(spread(&[3.0, 1.0, 2.0, 4.0]), Some((2.5, 1.0, 4.0)));
    assert_eq!(spread(&[f64::NAN]), None);
    assert_eq!(spread(&[]), None);
}

#[test]
fn nothing_measured_is_said_so() {
    let e = E2e::parse("");
    let goals = e.goals();
    assert_eq!(goals.len(), 1);
    assert_eq!(goals[0].2, None);
    let mut o = String::new();
    e.section(&mut o);
    assert!(o.contains("Not measured"), "{o}");
}
