//! The record encoding: sizes, prefixes and what a decoder refuses.

use super::*;

const ALL_DEFINED: Defined = Defined {
    paths: 10,
    handles: 10,
};

fn size_of(st: &mut OpsState, r: &Record) -> usize {
    let mut out = Vec::new();
    encode(&mut out, st, r, true).unwrap();
    out.len()
}

fn round_trip(records: &[Record], cpu: bool) -> Vec<Record> {
    let (mut out, mut st) = (Vec::new(), OpsState::new(1000));
    for r in records {
        encode(&mut out, &mut st, r, cpu).unwrap();
    }
    let (mut c, mut st) = (Cursor::new(&out, 0), OpsState::new(1000));
    let back = records
        .iter()
        .map(|_| decode(&mut c, &mut st, cpu, ALL_DEFINED).unwrap());
    let back = back.collect();
    assert!(c.is_empty());
    back
}

#[test]
fn a_random_pread_a_wal_write_and_an_fsync_take_their_planned_bytes() {
    let mut st = OpsState::new(0);
    let io = Record {
        dur_ns: 40_000,
        len: 8192,
        result: 8192,
        cpu_ns: 20_000,
        ..Record::default()
    };
    let pread = Record {
        op: Some(OpCode::Read),
        start_ns: 150_000,
        handle: Some(3),
        offset: 123_456 * 8192,
        ..io
    };
    // 1 op + 3 dt + 3 dur + 1 handle + 4 offset (a GiB in 512-byte units) + 1 len + 3 cpu.
    assert_eq!(size_of(&mut st, &pread), 16);
    let wal = Record {
        op: Some(OpCode::Write),
        handle: Some(4),
        offset: 1 << 20,
        ..io
    };
    let first = Record {
        start_ns: 300_000,
        ..wal
    };
    let next = Record {
        start_ns: 450_000,
        offset: (1 << 20) + 8192,
        ..wal
    };
    size_of(&mut st, &first);
    assert!(
        size_of(&mut st, &next) <= 10,
        "SAME_HANDLE, SEQ and SAME_LEN"
    );
    let fsync = Record {
        op: Some(OpCode::Fdatasync),
        start_ns: 600_000,
        handle: Some(4),
        dur_ns: 900_000,
        cpu_ns: 5_000,
        ..Record::default()
    };
    // 1 op (SAME_HANDLE) + 3 dt + 3 dur + 2 cpu.
    assert_eq!(size_of(&mut st, &fsync), 9);
}

#[test]
fn results_async_calls_and_stray_fields_take_a_prefix_and_round_trip() {
    let read = Record {
        op: Some(OpCode::Read),
        start_ns: 2000,
        handle: Some(1),
        len: 8192,
        result: 8192,
        ..Record::default()
    };
    let records = [
        read,
        Record {
            result: 100,
            start_ns: 1500,
            ..read
        }, // a short read, starting earlier
        Record {
            result: -5,
            is_async: true,
            ..read
        }, // -EIO, asynchronous
        Record {
            op: Some(OpCode::Fsync),
            arg: 9,
            offset: 4096,
            ..read
        }, // stray fields
        Record {
            op: Some(OpCode::Unlink),
            handle: Some(2),
            arg: 3,
            ..Record::default()
        },
        Record {
            op: Some(OpCode::Open),
            handle: None,
            arg: 4,
            result: -2,
            ..Record::default()
        },
        Record {
            offset: u64::MAX,
            len: u64::MAX - 1,
            cpu_ns: 77,
            ..read
        },
    ];
    assert_eq!(round_trip(&records, false), records);
    assert_eq!(round_trip(&records, true), records);
}

#[test]
fn a_flag_on_an_op_without_its_field_is_refused() {
    // fsync with SEQ; unlink with SAME_HANDLE; a read SEQ with no I/O before on its handle.
    for bytes in [
        vec![5 | SEQ, 0, 0, 1],
        vec![14 | SAME_HANDLE, 0, 0, 0],
        vec![3 | SEQ, 0, 0, 1, 0],
    ] {
        let e = decode(
            &mut Cursor::new(&bytes, 0),
            &mut OpsState::new(0),
            false,
            ALL_DEFINED,
        );
        assert!(
            matches!(e, Err(TraceError::Malformed { .. })),
            "{bytes:?}: {e:?}"
        );
    }
    let e = decode(
        &mut Cursor::new(&[PREFIX, PREFIX], 0),
        &mut OpsState::new(0),
        false,
        ALL_DEFINED,
    );
    assert!(
        matches!(
            e,
            Err(TraceError::InvalidOp {
                code: 31,
                offset: 1
            })
        ),
        "{e:?}"
    );
    let undefined = [2, 0, 0, 10];
    let e = decode(
        &mut Cursor::new(&undefined, 0),
        &mut OpsState::new(0),
        false,
        ALL_DEFINED,
    );
    assert!(
        matches!(
            e,
            Err(TraceError::Undefined {
                what: "handle",
                id: 10,
                offset: 3
            })
        ),
        "{e:?}"
    );
}

#[test]
fn offsets_and_lengths_are_tagged_by_alignment() {
    assert_eq!(tag(0), 0);
    assert_eq!(tag(8192), 32);
    assert_eq!(tag(100), 201);
    for v in [0, 511, 512, 8192, u64::MAX, u64::MAX - 511] {
        assert_eq!(untag(0, tag(v)).unwrap(), v);
    }
    assert!(untag(0, u128::MAX - 1).is_err());
}
