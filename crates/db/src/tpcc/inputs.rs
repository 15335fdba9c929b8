//! What each terminal asks for (clauses 2.4.1, 2.5.1, 2.6.1, 2.7.1, 2.8.1): the mix as a
//! shuffled deck, and each transaction's input drawn as the specification says.

use super::populate::{CUSTOMERS, DISTRICTS, ITEMS};
use super::random::{last_name, nurand, seeded, stream, NurandConstants};
use bakeoff_core::plan::OpKind;
use fastrand::Rng;

/// The five transaction kinds.
pub const KINDS: [OpKind; 5] = [
    OpKind::NewOrder,
    OpKind::Payment,
    OpKind::OrderStatus,
    OpKind::Delivery,
    OpKind::StockLevel,
];

/// Cards per kind in a deck of 100: New-Order 45 %, Payment 43 %, the others 4 % each.
const DECK: [(OpKind, usize); 5] = [
    (OpKind::NewOrder, 45),
    (OpKind::Payment, 43),
    (OpKind::OrderStatus, 4),
    (OpKind::Delivery, 4),
    (OpKind::StockLevel, 4),
];

/// An item number no item has: the last line of 1 % of New-Orders, which then roll back.
pub const UNUSED_ITEM: i64 = ITEMS + 1;

/// How a customer is picked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CustomerPick {
    /// By number (C_ID).
    Id(i64),
    /// By last name: the middle one of those named so, ordered by first name.
    LastName(String),
}

/// One line of a New-Order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineInput {
    /// Item number (`UNUSED_ITEM` on the last line of a New-Order that rolls back).
    pub item: i64,
    /// The warehouse supplying it.
    pub supply_w_id: i64,
    /// 1 to 10.
    pub quantity: i64,
}

/// A transaction and its input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transaction {
    /// New-Order (clause 2.4).
    NewOrder {
        w_id: i64,
        d_id: i64,
        c_id: i64,
        lines: Vec<LineInput>,
    },
    /// Payment (clause 2.5); the amount in cents.
    Payment {
        w_id: i64,
        d_id: i64,
        c_w_id: i64,
        c_d_id: i64,
        customer: CustomerPick,
        amount: i64,
    },
    /// Order-Status (clause 2.6).
    OrderStatus {
        w_id: i64,
        d_id: i64,
        customer: CustomerPick,
    },
    /// Delivery (clause 2.7): every district of the warehouse, in one transaction.
    Delivery { w_id: i64, carrier_id: i64 },
    /// Stock-Level (clause 2.8): the terminal's own district.
    StockLevel {
        w_id: i64,
        d_id: i64,
        threshold: i64,
    },
}

impl Transaction {
    /// Its kind.
    pub fn kind(&self) -> OpKind {
        match self {
            Transaction::NewOrder { .. } => OpKind::NewOrder,
            Transaction::Payment { .. } => OpKind::Payment,
            Transaction::OrderStatus { .. } => OpKind::OrderStatus,
            Transaction::Delivery { .. } => OpKind::Delivery,
            Transaction::StockLevel { .. } => OpKind::StockLevel,
        }
    }
}

/// A terminal's choices: its home warehouse and district, the deck, its random stream.
pub struct Terminal {
    w_id: i64,
    d_id: i64,
    warehouses: i64,
    constants: NurandConstants,
    rng: Rng,
    deck: Vec<OpKind>,
    dealt: usize,
}

impl Terminal {
    /// Terminal `index` of a run over `warehouses` warehouses: home warehouse
    /// `index % warehouses + 1`, its district cycling over the warehouse's terminals.
    pub fn new(index: u32, warehouses: u32, seed: u64) -> Terminal {
        let (index, warehouses) = (i64::from(index), i64::from(warehouses.max(1)));
        let deck = DECK
            .iter()
            .flat_map(|&(kind, cards)| std::iter::repeat_n(kind, cards))
            .collect::<Vec<_>>();
        Terminal {
            w_id: index % warehouses + 1,
            d_id: (index / warehouses) % DISTRICTS + 1,
            warehouses,
            constants: NurandConstants::for_run(seed),
            rng: seeded(seed, &[stream::TERMINAL, index as u64]),
            dealt: deck.len(),
            deck,
        }
    }

    /// Its home warehouse.
    pub fn warehouse(&self) -> i64 {
        self.w_id
    }

    /// Its district (Stock-Level's).
    pub fn district(&self) -> i64 {
        self.d_id
    }

    /// The next card of the deck, reshuffled once all 100 were dealt.
    fn next_kind(&mut self) -> OpKind {
        if self.dealt == self.deck.len() {
            self.rng.shuffle(&mut self.deck);
            self.dealt = 0;
        }
        self.dealt += 1;
        self.deck[self.dealt - 1]
    }

    /// The next transaction and its input.
    pub fn next_transaction(&mut self) -> Transaction {
        match self.next_kind() {
            OpKind::NewOrder => self.new_order(),
            OpKind::Payment => self.payment(),
            OpKind::OrderStatus => Transaction::OrderStatus {
                w_id: self.w_id,
                d_id: self.rng.i64(1..=DISTRICTS),
                customer: self.customer(),
            },
            OpKind::Delivery => Transaction::Delivery {
                w_id: self.w_id,
                carrier_id: self.rng.i64(1..=10),
            },
            _ => Transaction::StockLevel {
                w_id: self.w_id,
                d_id: self.d_id,
                threshold: self.rng.i64(10..=20),
            },
        }
    }

    /// A warehouse other than the home one (the home one if it is the only one).
    fn remote_warehouse(&mut self) -> i64 {
        if self.warehouses == 1 {
            return self.w_id;
        }
        let other = self.rng.i64(1..self.warehouses);
        if other >= self.w_id {
            other + 1
        } else {
            other
        }
    }

    fn customer_id(&mut self) -> i64 {
        nurand(&mut self.rng, 1023, 1, CUSTOMERS, self.constants.c_id)
    }

    /// 60 % by last name, 40 % by number.
    fn customer(&mut self) -> CustomerPick {
        if self.rng.u8(1..=100) <= 60 {
            let number = nurand(&mut self.rng, 255, 0, 999, self.constants.c_last);
            CustomerPick::LastName(last_name(number))
        } else {
            CustomerPick::Id(self.customer_id())
        }
    }

    fn new_order(&mut self) -> Transaction {
        let count = self.rng.usize(5..=15);
        let rollback = self.rng.u8(1..=100) == 1;
        let lines = (0..count)
            .map(|n| LineInput {
                item: if rollback && n == count - 1 {
                    UNUSED_ITEM
                } else {
                    nurand(&mut self.rng, 8191, 1, ITEMS, self.constants.ol_i_id)
                },
                supply_w_id: if self.rng.u8(1..=100) == 1 {
                    self.remote_warehouse()
                } else {
                    self.w_id
                },
                quantity: self.rng.i64(1..=10),
            })
            .collect();
        Transaction::NewOrder {
            w_id: self.w_id,
            d_id: self.rng.i64(1..=DISTRICTS),
            c_id: self.customer_id(),
            lines,
        }
    }

    fn payment(&mut self) -> Transaction {
        let d_id = self.rng.i64(1..=DISTRICTS);
        let (c_w_id, c_d_id) = if self.rng.u8(1..=100) <= 85 {
            (self.w_id, d_id)
        } else {
            (self.remote_warehouse(), self.rng.i64(1..=DISTRICTS))
        };
        Transaction::Payment {
            w_id: self.w_id,
            d_id,
            c_w_id,
            c_d_id,
            customer: self.customer(),
            amount: self.rng.i64(100..=500_000),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn the_mix_and_the_inputs_follow_the_specification() {
        let mut t = Terminal::new(5, 2, 9);
        assert_eq!((t.warehouse(), t.district()), (2, 3));
        let mut kinds: BTreeMap<OpKind, u32> = BTreeMap::new();
        let (mut lines, mut remote_lines, mut rollbacks, mut new_orders) = (0, 0, 0, 0);
        let (mut payments, mut by_name, mut remote_payments) = (0, 0, 0);
        for _ in 0..100_000 {
            let tx = t.next_transaction();
            *kinds.entry(tx.kind()).or_default() += 1;
            match tx {
                Transaction::NewOrder { lines: l, .. } => {
                    new_orders += 1;
                    assert!((5..=15).contains(&l.len()));
                    rollbacks += u32::from(l.last().is_some_and(|x| x.item == UNUSED_ITEM));
                    lines += l.len();
                    remote_lines += l.iter().filter(|x| x.supply_w_id != 2).count();
                }
                Transaction::Payment {
                    w_id,
                    c_w_id,
                    customer,
                    amount,
                    ..
                } => {
                    payments += 1;
                    by_name += u32::from(matches!(customer, CustomerPick::LastName(_)));
                    remote_payments += u32::from(c_w_id != w_id);
                    assert!((100..=500_000).contains(&amount));
                }
                Transaction::StockLevel {
                    d_id, threshold, ..
                } => {
                    assert_eq!(d_id, 3);
                    assert!((10..=20).contains(&threshold));
                }
                _ => {}
            }
        }
        // The deck deals exactly 45/43/4/4/4 of every 100.
        let expect = [45_000, 43_000, 4_000, 4_000, 4_000];
        for (kind, n) in KINDS.iter().zip(expect) {
            assert_eq!(kinds[kind], n, "{kind:?}");
        }
        let pct = |a: u32, b: u32| 100.0 * f64::from(a) / f64::from(b);
        assert!(
            (0.7..1.3).contains(&pct(rollbacks, new_orders)),
            "rollbacks"
        );
        assert!(
            (0.8..1.2).contains(&pct(remote_lines as u32, lines as u32)),
            "remote lines"
        );
        assert!(
            (58.0..62.0).contains(&pct(by_name, payments)),
            "by last name"
        );
        assert!(
            (13.5..16.5).contains(&pct(remote_payments, payments)),
            "remote payments"
        );
        // One warehouse: nothing is remote.
        let mut alone = Terminal::new(0, 1, 9);
        for _ in 0..10_000 {
            if let Transaction::NewOrder { lines, .. } = alone.next_transaction() {
                assert!(lines.iter().all(|l| l.supply_w_id == 1));
            }
        }
    }
}
