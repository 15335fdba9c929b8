//! No parser panics, whatever it is given.

use bakeoff_probe::{
    parse_arc_size, parse_block_stat, parse_cpu_model, parse_meminfo, parse_mountinfo,
    parse_proc_stat,
};
use proptest::prelude::*;

/// Arbitrary text, and text made of the tokens these files are made of.
fn texts() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        Just("cpu".to_string()),
        Just("cpu0".to_string()),
        Just("size".to_string()),
        Just("4".to_string()),
        Just("MemTotal:".to_string()),
        Just("Cached:".to_string()),
        Just("kB".to_string()),
        Just("-".to_string()),
        Just("\\040".to_string()),
        Just("\\".to_string()),
        Just("\n".to_string()),
        Just("254:0".to_string()),
        Just("18446744073709551615".to_string()),
        "[0-9]{1,25}",
        "\\PC{0,8}",
    ];
    prop_oneof![
        "\\PC*",
        prop::collection::vec(token, 0..60).prop_map(|t| t.join(" ")),
    ]
}

proptest! {
    #[test]
    fn parsers_never_panic(text in texts()) {
        let _ = parse_proc_stat(&text);
        let _ = parse_block_stat(&text);
        let _ = parse_meminfo(&text);
        let _ = parse_arc_size(&text);
        let _ = parse_mountinfo(&text);
        let _ = parse_cpu_model(&text);
    }

    #[test]
    fn block_stat_round_trips(v in prop::collection::vec(any::<u64>(), 11..=17)) {
        let text = v.iter().map(u64::to_string).collect::<Vec<_>>().join(" ");
        let c = parse_block_stat(&text).unwrap();
        prop_assert_eq!(c.read_ios, v[0]);
        prop_assert_eq!(c.time_in_queue_ms, v[10]);
        prop_assert_eq!(c.flush_ios, v.get(15).copied().filter(|_| v.len() == 17));
    }
}
