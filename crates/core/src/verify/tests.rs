use super::*;

/// A block of `len` seeded bytes, stamped for `offset` and `generation`.
fn block(len: usize, seed: u8, offset: u64, generation: u64, algorithm: Algorithm) -> Vec<u8> {
    let mut b: Vec<u8> = (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect();
    stamp(&mut b, offset, generation, algorithm);
    b
}

#[test]
fn a_good_block_checks_under_both_algorithms() {
    for algorithm in Algorithm::ALL {
        let b = block(8192, 7, 81920, 3, algorithm);
        let h = check(&b, 81920, algorithm).unwrap();
        assert_eq!((h.offset, h.generation), (81920, 3));
        check_generation(&h, 3, 5).unwrap();
        // A block of exactly the header's size carries no data, and checks.
        let tiny = block(HEADER_BYTES, 1, 0, 0, algorithm);
        check(&tiny, 0, algorithm).unwrap();
    }
}

#[test]
fn a_block_read_at_another_offset_names_the_offset_it_was_written_for() {
    let b = block(4096, 1, 8192, 1, Algorithm::Crc32c);
    let fault = check(&b, 12288, Algorithm::Crc32c).unwrap_err();
    assert!(matches!(fault, Fault::Offset { header } if header.offset == 8192));
    assert!(fault.to_string().contains("offset 8192"), "{fault}");
}

#[test]
fn a_flipped_bit_anywhere_is_caught() {
    for algorithm in Algorithm::ALL {
        let good = block(4096, 9, 4096, 2, algorithm);
        // In the data, in the offset and generation fields, and in the stored checksum.
        for (at, bit) in [(100, 0x01), (4095, 0x80), (9, 0x02), (16, 0x01), (33, 0x10)] {
            let mut bad = good.clone();
            bad[at] ^= bit;
            let fault = check(&bad, 4096, algorithm).unwrap_err();
            assert_eq!(fault.kind(), "checksum", "byte {at}: {fault}");
        }
    }
}

#[test]
fn a_block_without_the_magic_is_not_a_block_of_ours() {
    let mut b = block(4096, 3, 0, 0, Algorithm::Crc32c);
    b[0] ^= 0xff;
    let fault = check(&b, 0, Algorithm::Crc32c).unwrap_err();
    assert_eq!(fault.kind(), "magic");
    assert!(fault.to_string().contains("no block header"), "{fault}");
    let zeros = vec![0u8; 4096];
    assert_eq!(
        check(&zeros, 0, Algorithm::Sha256).unwrap_err().kind(),
        "magic"
    );
}

#[test]
fn a_torn_block_first_half_new_second_half_old_fails_its_checksum() {
    for algorithm in Algorithm::ALL {
        let old = block(8192, 5, 16384, 4, algorithm);
        let new = block(8192, 6, 16384, 5, algorithm);
        let mut torn = new[..4096].to_vec();
        torn.extend_from_slice(&old[4096..]);
        let fault = check(&torn, 16384, algorithm).unwrap_err();
        let Fault::Checksum { header, computed } = &fault else {
            panic!("expected a checksum fault, got {fault}");
        };
        assert_eq!(header.generation, 5, "the header is the new write's");
        assert_ne!(*computed, header.checksum);
        assert!(fault.to_string().contains("torn"), "{fault}");
    }
}

#[test]
fn another_length_or_algorithm_is_named() {
    let b = block(8192, 2, 0, 1, Algorithm::Crc32c);
    assert_eq!(
        check(&b[..4096], 0, Algorithm::Crc32c).unwrap_err(),
        Fault::Length { found: 8192 }
    );
    assert_eq!(
        check(&b, 0, Algorithm::Sha256).unwrap_err(),
        Fault::Algorithm { found: 1 }
    );
    assert_eq!(
        check(&b[..10], 0, Algorithm::Crc32c).unwrap_err(),
        Fault::TooShort { len: 10 }
    );
}

#[test]
fn generations_outside_the_range_the_writes_allow_are_faults() {
    let b = block(4096, 4, 0, 3, Algorithm::Crc32c);
    let h = check(&b, 0, Algorithm::Crc32c).unwrap();
    let stale = check_generation(&h, 5, 9).unwrap_err();
    assert!(stale.to_string().contains("lost or stale write"), "{stale}");
    let phantom = check_generation(&h, 0, 2).unwrap_err();
    assert!(phantom.to_string().contains("above 2"), "{phantom}");
    check_generation(&h, 3, 3).unwrap();
}

#[test]
fn the_key_takes_off_and_the_two_algorithms() {
    assert_eq!(Algorithm::parse_key("off"), Ok(None));
    assert_eq!(
        Algorithm::parse_key(" crc32c "),
        Ok(Some(Algorithm::Crc32c))
    );
    assert_eq!(Algorithm::parse_key("sha256"), Ok(Some(Algorithm::Sha256)));
    assert!(Algorithm::parse_key("md5").is_err());
}

#[test]
fn a_grid_counts_whole_blocks_after_its_offset() {
    let grid = BlockGrid {
        block_bytes: 8192,
        offset: 4096,
    };
    assert_eq!(grid.blocks_in(4096 + 3 * 8192 + 100), 3);
    assert_eq!(grid.blocks_in(100), 0);
}
