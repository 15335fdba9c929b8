//! The write log's format: what is written reads back record for record, and a cut, a flipped
//! byte or a missing end is an error naming the offset, never a different history.

use super::format::{ImageInfo, LogWriter, Op, MAGIC};
use super::LogReader;
use std::io::Cursor;
use std::path::Path;

fn images() -> Vec<ImageInfo> {
    vec![
        ImageInfo {
            name: "disk0.img".into(),
            size_bytes: 1 << 30,
        },
        ImageInfo {
            name: "wal.img".into(),
            size_bytes: 64 << 20,
        },
    ]
}

/// A log of a few records of every kind; returns its bytes and each record's start.
fn sample() -> (Vec<u8>, Vec<usize>) {
    let mut w = LogWriter::new(Vec::new(), &images()).unwrap();
    let mut starts = Vec::new();
    let mut mark = |w: &LogWriter<Vec<u8>>| starts.push(w.bytes() as usize);
    mark(&w);
    assert_eq!(w.write(0, 4096, &[1u8; 8192]).unwrap(), 0);
    mark(&w);
    assert_eq!(w.flush(0).unwrap(), 1);
    mark(&w);
    assert_eq!(w.zero(1, 0, 1 << 20).unwrap(), 2);
    mark(&w);
    assert_eq!(w.write(1, 512, b"commit").unwrap(), 3);
    mark(&w);
    let (bytes, size) = w.finish().unwrap();
    assert_eq!(size as usize, bytes.len());
    (bytes, starts)
}

fn read_all(bytes: &[u8]) -> Result<Vec<(super::Entry, Vec<u8>)>, super::LogError> {
    let mut r = LogReader::new(Cursor::new(bytes), Path::new("test.log"))?;
    assert_eq!(r.images(), &images()[..]);
    let mut out = Vec::new();
    let mut data = Vec::new();
    while let Some(e) = r.next(&mut data)? {
        out.push((e, data.clone()));
    }
    Ok(out)
}

#[test]
fn records_read_back_as_written() {
    let (bytes, starts) = sample();
    assert_eq!(bytes[..8], MAGIC);
    let records = read_all(&bytes).unwrap();
    let times: Vec<u64> = records.iter().map(|(e, _)| e.time_ns).collect();
    assert!(
        times[0] > 0 && times.windows(2).all(|w| w[0] <= w[1]),
        "{times:?}"
    );
    let ops: Vec<(u64, u32, Op)> = records
        .iter()
        .map(|(e, _)| (e.seq, e.image, e.op))
        .collect();
    let data_at = |i: usize, fixed: usize| (starts[i] + 21 + fixed) as u64;
    assert_eq!(
        ops,
        vec![
            (
                0,
                0,
                Op::Write {
                    offset: 4096,
                    len: 8192,
                    data_at: data_at(0, 12)
                }
            ),
            (1, 0, Op::Flush),
            (
                2,
                1,
                Op::Zero {
                    offset: 0,
                    len: 1 << 20
                }
            ),
            (
                3,
                1,
                Op::Write {
                    offset: 512,
                    len: 6,
                    data_at: data_at(3, 12)
                }
            ),
        ]
    );
    assert_eq!(records[0].1, vec![1u8; 8192]);
    assert_eq!(records[3].1, b"commit");
    assert!(records[1].1.is_empty() && records[2].1.is_empty());
    let at = data_at(3, 12) as usize;
    assert_eq!(
        &bytes[at..at + 6],
        b"commit",
        "data_at points at the data in the file"
    );
}

#[test]
fn a_cut_log_is_an_error_naming_the_record_and_its_offset() {
    let (bytes, starts) = sample();
    // Cut inside the third record (a zeroed range), a few bytes in.
    let cut = &bytes[..starts[2] + 5];
    let err = read_all(cut).unwrap_err();
    assert_eq!(err.offset, starts[2] as u64, "{err}");
    let text = err.to_string();
    assert!(
        text.contains("record 2 is cut short") && text.contains("test.log"),
        "{text}"
    );
    assert!(text.contains(&format!("at byte {}", starts[2])), "{text}");
    // Cut inside a write's data.
    let err = read_all(&bytes[..starts[0] + 21 + 12 + 100]).unwrap_err();
    assert_eq!(err.offset, starts[0] as u64);
    assert!(err.to_string().contains("record 0 is cut short"), "{err}");
}

#[test]
fn a_log_without_its_end_record_is_an_error() {
    let (bytes, starts) = sample();
    let err = read_all(&bytes[..starts[4]]).unwrap_err();
    assert_eq!(err.offset, starts[4] as u64);
    assert!(err.to_string().contains("without its end record"), "{err}");
}

#[test]
fn a_flipped_byte_anywhere_is_an_error_never_another_history() {
    let (bytes, _) = sample();
    let good = read_all(&bytes).unwrap();
    for i in 0..bytes.len() {
        let mut bad = bytes.clone();
        bad[i] ^= 0x10;
        match read_all(&bad) {
            Err(_) => {}
            Ok(records) => panic!("byte {i} flipped read as {} records", records.len()),
        }
    }
    assert_eq!(good.len(), 4);
}

#[test]
fn trailing_bytes_and_foreign_files_are_refused() {
    let (mut bytes, _) = sample();
    bytes.push(0);
    let err = read_all(&bytes).unwrap_err();
    assert!(err.to_string().contains("after its end record"), "{err}");
    let err = LogReader::new(Cursor::new(b"PGDMP not a log"), Path::new("x"))
        .err()
        .unwrap();
    assert!(err.to_string().contains("not a bakeoff write log"), "{err}");
    let (mut bytes, _) = sample();
    bytes[8] = 2;
    let err = read_all(&bytes).unwrap_err();
    assert!(err.to_string().contains("format version 2"), "{err}");
}

#[test]
fn an_oversized_write_is_refused_before_its_data_is_read() {
    let (mut bytes, starts) = sample();
    // The first record's length field: after kind, image, seq, time and offset.
    let len_at = starts[0] + 21 + 8;
    bytes[len_at..len_at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    let err = read_all(&bytes).unwrap_err();
    assert!(err.to_string().contains("claims a write of"), "{err}");
}
