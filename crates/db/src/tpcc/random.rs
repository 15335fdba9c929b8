//! TPC-C's random values (clause 4.3.2 and 2.1.6): uniform ranges, NURand, a- and n-strings,
//! customer last names from syllables, and the NURand constants of a load and of a run.

use fastrand::Rng;

/// The ten syllables customer last names are built from (clause 4.3.2.3).
pub const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// The last name for `number` in 0..=999: the syllables of its three digits.
pub fn last_name(number: i64) -> String {
    let digit = |d: i64| SYLLABLES[(d % 10) as usize];
    [digit(number / 100), digit(number / 10), digit(number)].concat()
}

/// NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y − x + 1)) + x.
pub fn nurand(rng: &mut Rng, a: i64, x: i64, y: i64, c: i64) -> i64 {
    (((rng.i64(0..=a) | rng.i64(x..=y)) + c) % (y - x + 1)) + x
}

const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// A random a-string of `min..=max` characters (letters and digits: 62 different ones).
pub fn a_string(rng: &mut Rng, min: usize, max: usize) -> String {
    let len = rng.usize(min..=max);
    (0..len)
        .map(|_| ALNUM[rng.usize(..ALNUM.len())] as char)
        .collect()
}

/// A random n-string of `len` digits.
pub fn n_string(rng: &mut Rng, len: usize) -> String {
    (0..len).map(|_| char::from(b'0' + rng.u8(0..10))).collect()
}

/// A data field of 26..=50 characters; one in ten holds "ORIGINAL" at a random place
/// (I_DATA and S_DATA, clause 4.3.3.1).
pub fn data_with_original(rng: &mut Rng) -> String {
    let mut data = a_string(rng, 26, 50);
    if rng.u8(0..10) == 0 {
        let at = rng.usize(0..=data.len() - 8);
        data.replace_range(at..at + 8, "ORIGINAL");
    }
    data
}

/// A zip code: four random digits and "11111".
pub fn zip(rng: &mut Rng) -> String {
    n_string(rng, 4) + "11111"
}

/// Two random capital letters.
pub fn state(rng: &mut Rng) -> String {
    (0..2).map(|_| char::from(b'A' + rng.u8(0..26))).collect()
}

/// A generator seeded from the run's seed and the place a value is for (table, warehouse,
/// district, row), so each part of the population is reproducible on its own.
pub fn seeded(seed: u64, parts: &[u64]) -> Rng {
    let mut h = splitmix(seed);
    for p in parts {
        h = splitmix(h ^ p.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    }
    Rng::with_seed(h)
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The constants C of NURand for C_LAST (A = 255), C_ID (A = 1023) and OL_I_ID (A = 8191).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NurandConstants {
    /// C for customer last names.
    pub c_last: i64,
    /// C for customer numbers.
    pub c_id: i64,
    /// C for item numbers.
    pub ol_i_id: i64,
}

/// Tags of the seeded generators, so no two parts of a run share a stream.
pub(crate) mod stream {
    pub const CONSTANTS: u64 = 1;
    pub const RUN_CONSTANTS: u64 = 2;
    pub const ITEM: u64 = 10;
    pub const WAREHOUSE: u64 = 11;
    pub const DISTRICT: u64 = 12;
    pub const CUSTOMER: u64 = 13;
    pub const HISTORY: u64 = 14;
    pub const ORDER: u64 = 15;
    pub const ORDER_LINE: u64 = 16;
    pub const PERMUTATION: u64 = 17;
    pub const STOCK: u64 = 18;
    pub const TERMINAL: u64 = 20;
}

impl NurandConstants {
    /// The constants the population of `seed` is generated with.
    pub fn for_load(seed: u64) -> NurandConstants {
        let mut rng = seeded(seed, &[stream::CONSTANTS]);
        NurandConstants {
            c_last: rng.i64(0..=255),
            c_id: rng.i64(0..=1023),
            ol_i_id: rng.i64(0..=8191),
        }
    }

    /// The constants a run on the population of `seed` uses: C_LAST's differs from the
    /// load's by 65..=119 but neither 96 nor 112 (clause 2.1.6.1); the others may be equal.
    pub fn for_run(seed: u64) -> NurandConstants {
        let load = NurandConstants::for_load(seed);
        let mut rng = seeded(seed, &[stream::RUN_CONSTANTS]);
        loop {
            let c_last = rng.i64(0..=255);
            if valid_run_delta(load.c_last, c_last) {
                return NurandConstants { c_last, ..load };
            }
        }
    }
}

/// Whether a run's C for C_LAST may follow a load's (clause 2.1.6.1).
pub fn valid_run_delta(load: i64, run: i64) -> bool {
    let delta = (run - load).abs();
    (65..=119).contains(&delta) && delta != 96 && delta != 112
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_have_their_lengths_and_alphabets() {
        let mut rng = Rng::with_seed(7);
        for _ in 0..1000 {
            let a = a_string(&mut rng, 8, 16);
            assert!((8..=16).contains(&a.len()) && a.bytes().all(|b| b.is_ascii_alphanumeric()));
            let d = data_with_original(&mut rng);
            assert!((26..=50).contains(&d.len()), "{d}");
        }
        assert!(n_string(&mut rng, 16).bytes().all(|b| b.is_ascii_digit()));
        let z = zip(&mut rng);
        assert!(z.len() == 9 && z.ends_with("11111"), "{z}");
        assert!(state(&mut rng).bytes().all(|b| b.is_ascii_uppercase()));
    }

    #[test]
    fn seeded_streams_differ_by_part_and_repeat_by_seed() {
        let draw = |seed, parts: &[u64]| seeded(seed, parts).u64(..);
        assert_eq!(draw(1, &[2, 3]), draw(1, &[2, 3]));
        assert_ne!(draw(1, &[2, 3]), draw(1, &[3, 2]));
        assert_ne!(draw(1, &[2, 3]), draw(2, &[2, 3]));
    }
}
