//! Property tests of the trace reader: no input panics it, no damaged trace reads as a
//! different one, every valid trace reads back as written, and database-like traces stay
//! within 20 bytes a record. The case counts keep the whole file under ~20 s in a debug build.

use bakeoff_core::trace::testing::{arb_db_like, arb_trace};
use bakeoff_core::trace::{read_trace, read_trace_lenient, write_trace, Trace, TraceError};
use proptest::prelude::*;
use std::io::Cursor;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        // ChaCha, the default, dominates the run time of an unoptimised build.
        rng_algorithm: proptest::test_runner::RngAlgorithm::XorShift,
        ..ProptestConfig::default()
    }
}

fn encode(trace: &Trace) -> Vec<u8> {
    write_trace(trace, Vec::new()).expect("a valid trace is written")
}

fn read(bytes: &[u8]) -> Result<Trace, TraceError> {
    read_trace(Cursor::new(bytes))
}

/// Bytes that start like a trace of this version, so the reader gets past its header.
fn trace_like() -> impl Strategy<Value = Vec<u8>> {
    (
        any::<[u8; 20]>(),
        prop::collection::vec(any::<u8>(), 0..600),
    )
        .prop_map(|(id, tail)| {
            let mut bytes = b"BKTRACE\0\x01\0\0\0".to_vec();
            bytes.extend_from_slice(&id);
            bytes.extend_from_slice(&tail);
            bytes
        })
}

proptest! {
    #![proptest_config(config(10_000))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let _ = read(&bytes);
        let _ = read_trace_lenient(Cursor::new(&bytes));
    }

    #[test]
    fn bytes_after_a_valid_header_never_panic(bytes in trace_like()) {
        prop_assert!(read(&bytes).is_err());
        let _ = read_trace_lenient(Cursor::new(&bytes));
    }
}

proptest! {
    #![proptest_config(config(4_000))]

    #[test]
    fn a_trace_reads_back_as_written(trace in arb_trace()) {
        prop_assert_eq!(read(&encode(&trace)).unwrap(), trace);
    }

    #[test]
    fn one_flipped_byte_is_always_an_error(trace in arb_trace(), at in any::<prop::sample::Index>(), bits in 1..=255u8) {
        let mut bytes = encode(&trace);
        let i = at.index(bytes.len());
        bytes[i] ^= bits;
        prop_assert!(read(&bytes).is_err(), "byte {} ^ {:#x} read as a trace", i, bits);
        if let Ok(lenient) = read_trace_lenient(Cursor::new(&bytes)) {
            // Only a cut can pass a lenient read, and what it keeps is the trace's.
            prop_assert!(lenient.truncated_at.is_some());
            prop_assert_eq!(lenient.trace.header, trace.header);
        }
    }

    #[test]
    fn a_truncated_trace_is_always_an_error(trace in arb_trace(), at in any::<prop::sample::Index>()) {
        let bytes = encode(&trace);
        let cut = at.index(bytes.len());
        let e = read(&bytes[..cut]).unwrap_err();
        prop_assert!(e.is_truncated() || matches!(e, TraceError::Empty), "{}", e);
        if cut >= 32 {
            if let Ok(lenient) = read_trace_lenient(Cursor::new(&bytes[..cut])) {
                prop_assert_eq!(lenient.truncated_at, Some(cut as u64));
                for (kept, all) in lenient.trace.ops.iter().zip(&trace.ops) {
                    prop_assert!(all.starts_with(kept));
                }
            }
        }
    }

    #[test]
    fn another_major_version_is_always_refused(trace in arb_trace(), major in 2..=u16::MAX) {
        let mut bytes = encode(&trace);
        bytes[8..10].copy_from_slice(&major.to_le_bytes());
        let e = read(&bytes).unwrap_err();
        prop_assert!(matches!(e, TraceError::Version { major: m, .. } if m == major), "{}", e);
    }
}

proptest! {
    #![proptest_config(config(200))]

    #[test]
    fn database_like_traces_take_at_most_20_bytes_a_record(trace in arb_db_like()) {
        let bytes = encode(&trace);
        let per_record = bytes.len() as f64 / trace.record_count() as f64;
        prop_assert!(per_record <= 20.0, "{:.1} bytes a record", per_record);
        prop_assert_eq!(read(&bytes).unwrap(), trace);
    }
}
